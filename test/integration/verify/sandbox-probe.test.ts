import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProbeReport, renderSandboxProbe, type SandboxProbeOptions } from '../../../src/verify';
import type { ClientMode } from '../../../src/config';

/**
 * The verify probe, run for real with node, against stand-ins on 127.0.0.1: a platform API (create, delete), a
 * gateway that runs the requested process here and streams its output as Connect frames, a what-is-my-IP server and
 * a SOCKS5 server (local mode). It checks what the probe sends on the wire and what parseProbeReport makes of it.
 */
const KEY = 'e2b_probe_test_key_0123456789';
const TOKEN = 'probe-access-token';
const SEEN_AS = '203.0.113.77';

function listen(server: Server | TcpServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function read(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

function frame(message: unknown, flags = 0): Buffer {
  const body = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

describe('sandbox probe of sandbox-kit verify', () => {
  let dir: string;
  const servers: Array<Server | TcpServer> = [];
  const seen: { create?: unknown; startHeaders?: IncomingMessage['headers']; startBody?: unknown; deleted?: string; socksTarget?: string } =
    {};
  let ports: { api: number; gateway: number; whoami: number; socks: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-probe-'));
    writeFileSync(join(dir, 'api-key'), `${KEY}\n`, { mode: 0o600 });
    const whoami = createHttpServer((_req, res) => res.end(`${SEEN_AS}\n`));
    const api = createHttpServer(async (req, res) => {
      const body = await read(req);
      if (req.headers['x-api-key'] !== KEY) {
        res.writeHead(401).end(JSON.stringify({ code: 401, message: 'bad key' }));
      } else if (req.method === 'POST' && req.url === '/v2/sandboxes') {
        seen.create = JSON.parse(body.toString());
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sandboxID: 'sbxprobe01', envdAccessToken: TOKEN }));
      } else if (req.method === 'DELETE') {
        seen.deleted = req.url;
        res.writeHead(204).end();
      } else {
        res.writeHead(404).end();
      }
    });
    // Runs the process the probe asks for, here, and streams it back the way the agent does.
    const gateway = createHttpServer(async (req, res) => {
      const body = await read(req);
      seen.startHeaders = req.headers;
      const start = JSON.parse(body.subarray(5).toString()) as { process: { cmd: string; args: string[] } };
      seen.startBody = start;
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.write(frame({ event: { start: { pid: 42 } } }));
      const child = spawn(start.process.cmd, start.process.args);
      child.stdout.on('data', (d: Buffer) => res.write(frame({ event: { data: { stdout: d.toString('base64') } } })));
      child.stderr.on('data', (d: Buffer) => res.write(frame({ event: { data: { stderr: d.toString('base64') } } })));
      child.on('close', (code) => {
        res.write(frame({ event: { end: { exitCode: code, exited: true, status: `exit status ${code}` } } }));
        res.end(frame({}, 2));
      });
    });
    // A SOCKS5 server (no auth, CONNECT by name) that always connects to the what-is-my-IP server.
    const socks = createTcpServer((client) => {
      client.once('data', () => {
        client.write(Buffer.from([5, 0]));
        client.once('data', (req: Buffer) => {
          const len = req[4]!;
          seen.socksTarget = `${req.subarray(5, 5 + len).toString()}:${req.readUInt16BE(5 + len)}`;
          const upstream = connect(ports.whoami, '127.0.0.1', () => {
            client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
            client.pipe(upstream).pipe(client);
          });
          upstream.on('error', () => client.destroy());
        });
      });
    });
    servers.push(whoami, api, gateway, socks);
    ports = { whoami: await listen(whoami), api: await listen(api), gateway: await listen(gateway), socks: await listen(socks) };
  });

  afterAll(() => {
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function options(mode: ClientMode, checkUrl: string): SandboxProbeOptions {
    return {
      apiPort: ports.api,
      gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
      agentPort: 49983,
      brand: 'Svc',
      apiKeyFile: join(dir, 'api-key'),
      template: 'sandbox-kit-proxy',
      checkUrl,
      mode,
      socksPort: ports.socks,
      sandboxNode: process.execPath,
    };
  }

  async function probe(o: SandboxProbeOptions) {
    const child = spawn(process.execPath, ['-e', renderSandboxProbe(o)]);
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    await new Promise((resolve) => child.on('close', resolve));
    return stdout;
  }

  it('local mode: creates a sandbox, asks through SOCKS5 inside it, reports what it saw, removes the sandbox', async () => {
    const out = await probe(options('local', 'http://checkip.example.test/'));
    expect(out).not.toContain(KEY);
    expect(out).not.toContain(TOKEN);
    expect(parseProbeReport(out)).toEqual({
      created: true,
      sandboxID: 'sbxprobe01',
      stdout: `${SEEN_AS}\n`,
      stderr: '',
      exitCode: 0,
      removed: true,
    });
    expect(seen.create).toEqual({ templateID: 'sandbox-kit-proxy', timeout: 120 });
    expect(seen.socksTarget).toBe('checkip.example.test:80');
    expect(seen.startHeaders).toMatchObject({
      'content-type': 'application/connect+json',
      'connect-protocol-version': '1',
      'svc-sandbox-id': 'sbxprobe01',
      'svc-sandbox-port': '49983',
      'x-access-token': TOKEN,
      authorization: `Basic ${Buffer.from('root:').toString('base64')}`,
    });
    expect(seen.deleted).toBe('/sandboxes/sbxprobe01');
  });

  it('transparent mode: a plain request from inside the sandbox', async () => {
    const out = await probe(options('transparent', `http://127.0.0.1:${ports.whoami}/`));
    expect(parseProbeReport(out)).toMatchObject({ created: true, stdout: `${SEEN_AS}\n`, exitCode: 0, removed: true });
  });

  it('reports a failed request with its error, and still removes the sandbox', async () => {
    const out = await probe(options('transparent', 'http://127.0.0.1:1/'));
    const outcome = parseProbeReport(out);
    expect(outcome).toMatchObject({ created: true, exitCode: 1, removed: true });
    expect(outcome.stderr).toMatch(/ECONNREFUSED/);
  });

  it('reports a refused create without running anything', async () => {
    const o = options('local', 'http://x/');
    writeFileSync(join(dir, 'wrong-key'), 'e2b_wrong\n');
    const out = await probe({ ...o, apiKeyFile: join(dir, 'wrong-key') });
    expect(parseProbeReport(out)).toMatchObject({ created: false, removed: false, problem: 'creating a sandbox failed: 401 bad key' });
  });
});
