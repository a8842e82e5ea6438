/**
 * `network.httpsPorts` and `network.maskRequestHost` through the gateway, driven by the unmodified SDK: a server in
 * the sandbox (its unprivileged user) serves HTTPS with a certificate the gateway does not trust on one port and plain
 * HTTP on another; `getHost(port)` through the gateway reaches both, plain calls and upgrades; the service sees the
 * Host as sent, or the mask with the port put in; the agent's token never reaches it; a fork keeps both settings.
 * Refused: the agent's port as an HTTPS port, a mask that is not one Host. Root only.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { type TestCertificates, testCertificates } from '../../helpers/tls-domain';
import { startRig, type NetworkRig } from './helpers/rig';

jest.setTimeout(240_000);

const HTTPS_PORT = 8443;
const PLAIN_PORT = 8080;
const P = ['$', '{PORT}'].join('');

/** Answers every call (and an upgrade) with what it saw: TLS or not, the Host, an access token. */
const SERVER = `
const https = require('node:https');
const http = require('node:http');
const fs = require('node:fs');
const seen = (req, socket) => JSON.stringify({ tls: socket.encrypted === true, host: req.headers.host ?? null, token: req.headers['x-access-token'] ?? null });
const answer = (req, res) => { res.setHeader('content-type', 'application/json'); res.end(seen(req, req.socket)); };
const upgrade = (req, socket) => socket.end('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: x-echo\\r\\nConnection: Upgrade\\r\\n\\r\\n' + seen(req, socket));
for (const s of [https.createServer({ key: fs.readFileSync('/tmp/site.key'), cert: fs.readFileSync('/tmp/site.crt') }, answer).listen(${HTTPS_PORT}), http.createServer(answer).listen(${PLAIN_PORT})]) s.on('upgrade', upgrade);
`;

interface Seen {
  tls: boolean;
  host: string | null;
  token: string | null;
}

let rig: NetworkRig;
let certs: TestCertificates;
beforeAll(async () => {
  certs = await testCertificates('nt5.test');
  rig = await startRig({}, 'nt5');
}, ROOTFS_TIMEOUT_MS);
afterAll(async () => {
  await rig?.close();
  await certs?.close();
});

/** The SDK's options, with the gateway's host-form domain: getHost(port) names a host the gateway routes. */
const sdkOpts = () => ({ ...rig.opts, domain: 'localhost' });

async function startServers(sandboxID: string): Promise<void> {
  await rig.sdk.call(sandboxID, 'files.write', '/tmp/site.key', certs.key.toString('utf8'));
  await rig.sdk.call(sandboxID, 'files.write', '/tmp/site.crt', certs.cert.toString('utf8'));
  await rig.sdk.call(sandboxID, 'files.write', '/tmp/servers.js', SERVER);
  await rig.sdk.call(sandboxID, 'commands.run', 'nohup /opt/sandbox-kit/node /tmp/servers.js >/tmp/servers.log 2>&1 &', { user: 'user' });
  const wait = await rig.sh(
    sandboxID,
    `for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${HTTPS_PORT} && exec 4<>/dev/tcp/127.0.0.1/${PLAIN_PORT}) 2>/dev/null && exit 0; sleep 0.1; done; cat /tmp/servers.log; exit 1`,
  );
  if (wait.exitCode !== 0) throw new Error(`the servers did not start: ${wait.stdout}${wait.stderr}`);
}

/** A GET through the gateway to the host `getHost(port)` gave, as a browser at that URL sends it. */
function get(host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: rig.gateway.port, path: '/', headers: { host, ...headers }, timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** An upgrade through the gateway: everything the connection carried back. */
function upgrade(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(rig.gateway.port, '127.0.0.1', () =>
      socket.write(`GET /up HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: x-echo\r\n\r\n`),
    );
    let text = '';
    socket.setEncoding('utf8');
    socket.setTimeout(20_000, () => socket.destroy(new Error('timed out')));
    socket.on('data', (c: string) => {
      text += c;
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

const seenBy = (body: string): Seen => JSON.parse(body) as Seen;
const upgradeSeen = (text: string): Seen => {
  expect(text).toMatch(/^HTTP\/1\.1 101 /);
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Seen;
};

test('httpsPorts: getHost(port) reaches an HTTPS server with a certificate the gateway does not trust; the plain port beside it stays plain; getInfo shows the ports', async () => {
  const s = await rig.sdk.create('base', { ...sdkOpts(), network: { httpsPorts: [HTTPS_PORT] } });
  await startServers(s.sandboxId);
  const info = await rig.sdk.call<{ network: { httpsPorts?: number[]; maskRequestHost?: string } }>(s.sandboxId, 'getInfo');
  expect(info.network.httpsPorts).toEqual([HTTPS_PORT]);
  expect(info.network.maskRequestHost).toBeUndefined();

  const httpsHost = await rig.sdk.call<string>(s.sandboxId, 'getHost', HTTPS_PORT);
  expect(httpsHost).toBe(`${HTTPS_PORT}-${s.sandboxId}.localhost`);
  const token = (
    (await (await fetch(`${rig.opts.apiUrl}/sandboxes/${s.sandboxId}`, { headers: { 'x-api-key': rig.opts.apiKey } })).json()) as {
      envdAccessToken: string;
    }
  ).envdAccessToken;
  // Over TLS, the Host as the caller sent it, and the agent's token (sent by mistake) stripped as on any port.
  const secure = await get(httpsHost, { 'X-Access-Token': token });
  expect(secure.status).toBe(200);
  expect(seenBy(secure.body)).toEqual({ tls: true, host: httpsHost, token: null });
  expect(upgradeSeen(await upgrade(httpsHost))).toEqual({ tls: true, host: httpsHost, token: null });

  const plainHost = await rig.sdk.call<string>(s.sandboxId, 'getHost', PLAIN_PORT);
  expect(seenBy((await get(plainHost)).body)).toEqual({ tls: false, host: plainHost, token: null });
  // The SDK's own calls to the agent are untouched.
  expect((await rig.sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'echo ok')).stdout).toBe('ok\n');

  // Without httpsPorts the same HTTPS server is spoken to in plain HTTP, which it does not answer.
  const plainOnly = await rig.sdk.create('base', sdkOpts());
  await startServers(plainOnly.sandboxId);
  const refused = await get(await rig.sdk.call<string>(plainOnly.sandboxId, 'getHost', HTTPS_PORT));
  expect(refused.status).toBe(502);
  expect(refused.body).not.toContain('"tls":true');

  // The agent's port cannot be an HTTPS port: a 400 naming it, and no sandbox made.
  const before = (await rig.platform.sandboxes.all()).length;
  await expect(rig.sdk.create('base', { ...sdkOpts(), network: { httpsPorts: [HTTPS_PORT, 49983] } })).rejects.toThrow(
    /network.httpsPorts.*49983 is the port of the sandbox's agent \(envd\)/,
  );
  expect((await rig.platform.sandboxes.all()).length).toBe(before);
  for (const id of [s.sandboxId, plainOnly.sandboxId]) expect(await rig.sdk.call(id, 'kill')).toBe(true);
});

test('maskRequestHost: the services see the mask with the port put in, on HTTP and HTTPS ports and upgrades; a fork keeps both settings; a bad mask is refused', async () => {
  const network = { httpsPorts: [HTTPS_PORT], maskRequestHost: `localhost:${P}` };
  const s = await rig.sdk.create('base', { ...sdkOpts(), network });
  await startServers(s.sandboxId);
  const info = await rig.sdk.call<{ network: { httpsPorts?: number[]; maskRequestHost?: string } }>(s.sandboxId, 'getInfo');
  expect(info.network).toMatchObject(network);

  const httpsHost = await rig.sdk.call<string>(s.sandboxId, 'getHost', HTTPS_PORT);
  const plainHost = await rig.sdk.call<string>(s.sandboxId, 'getHost', PLAIN_PORT);
  expect(seenBy((await get(httpsHost)).body)).toEqual({ tls: true, host: `localhost:${HTTPS_PORT}`, token: null });
  expect(seenBy((await get(plainHost)).body)).toEqual({ tls: false, host: `localhost:${PLAIN_PORT}`, token: null });
  expect(upgradeSeen(await upgrade(plainHost))).toEqual({ tls: false, host: `localhost:${PLAIN_PORT}`, token: null });

  // A fork is the same service: its ports and mask come along (its server process does not: it is started again).
  const [fork] = await rig.sdk.fork(s.sandboxId, {});
  // The fork's files include the certificate and the script.
  const forkID = fork?.sandboxId as string;
  expect(fork?.error).toBeUndefined();
  const forkInfo = await rig.sdk.call<{ network: { httpsPorts?: number[]; maskRequestHost?: string } }>(forkID, 'getInfo');
  expect(forkInfo.network).toMatchObject(network);
  await rig.sdk.call(forkID, 'commands.run', 'nohup /opt/sandbox-kit/node /tmp/servers.js >/tmp/servers.log 2>&1 &', { user: 'user' });
  await rig.sh(forkID, `for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${HTTPS_PORT}) 2>/dev/null && exit 0; sleep 0.1; done`);
  const forkHost = await rig.sdk.call<string>(forkID, 'getHost', HTTPS_PORT);
  expect(seenBy((await get(forkHost)).body)).toEqual({ tls: true, host: `localhost:${HTTPS_PORT}`, token: null });

  // A mask that would smuggle a header, or is no host: refused, nothing made.
  const before = (await rig.platform.sandboxes.all()).length;
  for (const mask of ['app.test\r\nX-Evil: 1', 'http://app.test/', `app.test:${P}0`]) {
    await expect(rig.sdk.create('base', { ...sdkOpts(), network: { maskRequestHost: mask } })).rejects.toThrow(
      /network.maskRequestHost.*expected a host name or IPv4 address with an optional :port/,
    );
  }
  expect((await rig.platform.sandboxes.all()).length).toBe(before);
  for (const id of [s.sandboxId, forkID]) expect(await rig.sdk.call(id, 'kill')).toBe(true);
});
