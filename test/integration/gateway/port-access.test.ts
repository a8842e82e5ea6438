/**
 * Which credential reaches which port, and WebSockets through the gateway: the access token goes to the agent's port
 * only; other ports are public, or need the traffic access token when the sandbox's entry holds one; an upgrade is
 * checked the same way and then tunnels both ways.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { WebSocket } from 'undici';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { MemoryCatalog } from '../../../src/catalog';
import { hashAccessToken } from '../../../src/contract';
import { call, Cleanup, startUpstream, type Upstream } from './helpers/common';

const TOKEN = 'agent-token-of-sb1';
const TRAFFIC = 'traffic-token-of-sb1';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function recorder(name: string): Promise<Upstream> {
  const upstream = await startUpstream((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ name, headers: req.headers }));
  });
  cleanup.add(() => upstream.close());
  return upstream;
}

async function gatewayFor(entry: ConstructorParameters<typeof MemoryCatalog>[0]): Promise<RunningGateway> {
  const gateway = await startGateway({ catalog: new MemoryCatalog(entry) });
  cleanup.add(() => gateway.close(100));
  return gateway;
}

/** A WebSocket echo server as a child process (the same script a sandbox runs). */
async function wsEcho(): Promise<number> {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'helpers', 'ws-echo-server.js'), '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanup.add(() => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`ws-echo exited ${code}`)));
    child.stdout.on('data', (d: Buffer) => {
      const m = /listening on (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
  });
}

function wsExchange(url: string, headers: Record<string, string>, messages: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers } as unknown as string[]);
    const got: string[] = [];
    ws.onopen = () => ws.send(messages[0]!);
    ws.onmessage = (ev) => {
      got.push(String(ev.data));
      if (got.length < messages.length) ws.send(messages[got.length]!);
      else ws.close();
    };
    ws.onclose = () => resolve(got);
    ws.onerror = (ev) => reject(new Error(`websocket failed: ${String((ev as { message?: string }).message ?? 'error')}`));
  });
}

describe('credentials per port', () => {
  it('passes X-Access-Token to the agent and strips it from every other port, which is public', async () => {
    const agent = await recorder('agent');
    const app = await recorder('app');
    const gateway = await gatewayFor([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const toAgent = await call(gateway.port, { headers: { 'E2b-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(JSON.parse(toAgent.body)).toMatchObject({ name: 'agent', headers: { 'x-access-token': TOKEN } });
    const leaked = await call(gateway.port, {
      headers: { 'E2b-Sandbox-Id': 'sb1', 'E2b-Sandbox-Port': String(app.port), 'X-Access-Token': TOKEN },
    });
    expect(leaked.status).toBe(200);
    const seen = JSON.parse(leaked.body);
    expect(seen.name).toBe('app');
    expect(seen.headers['x-access-token']).toBeUndefined();
    const anonymous = await call(gateway.port, { headers: { 'E2b-Sandbox-Id': 'sb1', 'E2b-Sandbox-Port': String(app.port) } });
    expect(anonymous.status).toBe(200);
    // The agent itself still needs the token.
    const noToken = await call(gateway.port, { headers: { 'E2b-Sandbox-Id': 'sb1' } });
    expect(noToken.status).toBe(401);
  });

  it('with a traffic token, other ports need e2b-traffic-access-token, which no port sees', async () => {
    const agent = await recorder('agent');
    const app = await recorder('app');
    const gateway = await gatewayFor([
      { sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN, trafficTokenHash: hashAccessToken(TRAFFIC) },
    ]);
    const route = { 'E2b-Sandbox-Id': 'sb1', 'E2b-Sandbox-Port': String(app.port) };
    const missing = await call(gateway.port, { headers: { ...route, 'X-Access-Token': TOKEN } });
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body).message).toContain('e2b-traffic-access-token');
    const wrong = await call(gateway.port, { headers: { ...route, 'e2b-traffic-access-token': 'not-it' } });
    expect(wrong.status).toBe(401);
    const right = await call(gateway.port, { headers: { ...route, 'e2b-traffic-access-token': TRAFFIC } });
    expect(right.status).toBe(200);
    expect(JSON.parse(right.body).headers['e2b-traffic-access-token']).toBeUndefined();
    // The agent's port is unchanged: its own token, and the traffic token is not passed on there either.
    const toAgent = await call(gateway.port, {
      headers: { 'E2b-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN, 'e2b-traffic-access-token': TRAFFIC },
    });
    expect(toAgent.status).toBe(200);
    expect(JSON.parse(toAgent.body).headers['e2b-traffic-access-token']).toBeUndefined();
  });
});

describe('WebSocket through the gateway', () => {
  it('upgrades on any port and echoes both ways; the access token does not reach a non-agent port', async () => {
    const agent = await recorder('agent');
    const port = await wsEcho();
    const gateway = await gatewayFor([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const got = await wsExchange(
      `ws://127.0.0.1:${gateway.port}/chat`,
      { 'E2b-Sandbox-Id': 'sb1', 'E2b-Sandbox-Port': String(port), 'X-Access-Token': TOKEN },
      ['one', 'two'],
    );
    expect(got).toEqual(['echo:one token:', 'echo:two token:']);
  });

  it('refuses an upgrade to a non-public port without the traffic token, before anything reaches the sandbox', async () => {
    const agent = await recorder('agent');
    const port = await wsEcho();
    const gateway = await gatewayFor([
      { sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN, trafficTokenHash: hashAccessToken(TRAFFIC) },
    ]);
    const route = { 'E2b-Sandbox-Id': 'sb1', 'E2b-Sandbox-Port': String(port) };
    await expect(wsExchange(`ws://127.0.0.1:${gateway.port}/`, route, ['x'])).rejects.toThrow();
    const got = await wsExchange(`ws://127.0.0.1:${gateway.port}/`, { ...route, 'e2b-traffic-access-token': TRAFFIC }, ['x']);
    expect(got).toEqual(['echo:x token:']);
  });
});
