/**
 * Ports of real sandboxes through the gateway, driven by the unmodified SDK: the agent's token never reaches a
 * service of the sandbox's unprivileged user; `allowPublicTraffic: false` closes the other ports to callers without
 * the sandbox's trafficAccessToken; a WebSocket server in the sandbox is reached through the gateway.
 */
import { WebSocket } from 'undici';
import { ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { startEchoIn, startRig, type NetworkRig } from './helpers/rig';

jest.setTimeout(180_000);

let rig: NetworkRig;
beforeAll(async () => {
  rig = await startRig();
}, ROOTFS_TIMEOUT_MS);
afterAll(async () => rig?.close());

async function tokenOf(sandboxID: string): Promise<string> {
  const res = await fetch(`${rig.opts.apiUrl}/sandboxes/${sandboxID}`, { headers: { 'x-api-key': rig.opts.apiKey } });
  return ((await res.json()) as { envdAccessToken: string }).envdAccessToken;
}

async function callPort(sandboxID: string, port: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const res = await fetch(`${rig.opts.sandboxUrl}/seen`, {
    headers: { 'E2b-Sandbox-Id': sandboxID, 'E2b-Sandbox-Port': String(port), ...headers },
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: await res.text() };
}

function wsEcho(url: string, headers: Record<string, string>, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers } as unknown as string[]);
    ws.onopen = () => ws.send(message);
    ws.onmessage = (ev) => {
      resolve(String(ev.data));
      ws.close();
    };
    ws.onerror = () => reject(new Error('websocket failed'));
  });
}

test('a listener of the unprivileged user on port 8080 never receives the agent token; a WebSocket echoes through the gateway', async () => {
  const s = await rig.sdk.create('base', rig.opts);
  expect(s.trafficAccessToken).toBeNull();
  const token = await tokenOf(s.sandboxId);
  await startEchoIn(rig, s.sandboxId, 8080);
  // What the SDK user's code sends to a sandbox port, token included by mistake or by a hostile page.
  const seen = await callPort(s.sandboxId, 8080, { 'X-Access-Token': token });
  expect(seen.status).toBe(200);
  const headers = (JSON.parse(seen.body) as { headers: Record<string, string> }).headers;
  expect(headers['e2b-sandbox-id']).toBe(s.sandboxId);
  expect(headers['x-access-token']).toBeUndefined();
  expect(seen.body).not.toContain(token);
  // The ports are public by default.
  expect((await callPort(s.sandboxId, 8080, {})).status).toBe(200);
  // A WebSocket to the same server, with the token sent along: upgraded, echoed, and the token stripped.
  const echoed = await wsEcho(
    `ws://127.0.0.1:${rig.gateway.port}/ws`,
    { 'E2b-Sandbox-Id': s.sandboxId, 'E2b-Sandbox-Port': '8080', 'X-Access-Token': token },
    'hello',
  );
  expect(echoed).toBe('echo:hello token:');
  expect(await rig.sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test('allowPublicTraffic: false: other ports need the trafficAccessToken of the create answer; the agent is unchanged', async () => {
  const s = await rig.sdk.create('base', { ...rig.opts, network: { allowPublicTraffic: false } });
  expect(typeof s.trafficAccessToken).toBe('string');
  await startEchoIn(rig, s.sandboxId, 8080);
  const anonymous = await callPort(s.sandboxId, 8080, {});
  expect(anonymous.status).toBe(401);
  expect(anonymous.body).toContain('e2b-traffic-access-token');
  const withAgentToken = await callPort(s.sandboxId, 8080, { 'X-Access-Token': await tokenOf(s.sandboxId) });
  expect(withAgentToken.status).toBe(401);
  const allowed = await callPort(s.sandboxId, 8080, { 'e2b-traffic-access-token': s.trafficAccessToken as string });
  expect(allowed.status).toBe(200);
  expect(allowed.body).not.toContain(s.trafficAccessToken as string);
  // The SDK's own calls (agent port, X-Access-Token) still work.
  expect((await rig.sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'echo ok')).stdout).toBe('ok\n');
  // getInfo over the API hands the token back to its owner.
  const info = await fetch(`${rig.opts.apiUrl}/sandboxes/${s.sandboxId}`, { headers: { 'x-api-key': rig.opts.apiKey } });
  expect(((await info.json()) as { trafficAccessToken: string }).trafficAccessToken).toBe(s.trafficAccessToken);
  expect(await rig.sdk.call(s.sandboxId, 'kill')).toBe(true);
});
