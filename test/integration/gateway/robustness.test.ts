import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sameConnectionTwice } from '../../helpers/same-connection';
import { call, Cleanup, spawnGateway, startUpstream, type CliGateway } from './helpers/common';

const TOKEN = 'robust-token';
const cleanup = new Cleanup();
let gateway: CliGateway;

/** Sends raw bytes and returns whatever the gateway answers before it closes the connection. */
function raw(port: number, bytes: string | Buffer, endAfterWrite = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(answer) : reject(err)));
    socket.write(bytes);
    if (endAfterWrite) socket.end();
  });
}

const POST = `POST / HTTP/1.1\r\nHost: x\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length: 5\r\n\r\nhello`;

beforeAll(async () => {
  const upstream = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => res.end('fine'));
  });
  cleanup.add(() => upstream.close());
  const dir = await mkdtemp(join(tmpdir(), 'sk-gw-robust-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'catalog.json');
  await writeFile(
    file,
    JSON.stringify([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: upstream.port, token: TOKEN, state: 'running' }]),
  );
  gateway = await spawnGateway(['--catalog', `file:${file}`, '--max-header-bytes', '4096', '--headers-timeout-ms', '500']);
  cleanup.add(() => gateway.stop());
});
afterAll(() => cleanup.run());

async function stillServes(): Promise<void> {
  const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
  expect(reply.body).toBe('fine');
  expect(gateway.child.exitCode).toBeNull();
}

describe('gateway process under bad clients', () => {
  it('prints where it listens and serves', async () => {
    expect(gateway.output()).toMatch(/gateway listening on 127\.0\.0\.1:\d+/);
    await stillServes();
  });

  it('answers 431 JSON to a request head over --max-header-bytes', async () => {
    const answer = await raw(gateway.port, `GET / HTTP/1.1\r\nHost: x\r\nSvc-Sandbox-Id: sb1\r\nX-Big: ${'a'.repeat(8000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toContain('application/json');
    await stillServes();
  });

  it('closes a connection whose head does not arrive within --headers-timeout-ms', async () => {
    const answer = await raw(gateway.port, 'GET / HTTP/1.1\r\nHost: x\r\nSvc-Sand');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    await stillServes();
  });

  it.each([
    ['garbage', '\x00\x01\x02 not http at all\r\n\r\n'],
    ['bad request line', 'GET\r\n\r\n'],
    [
      'bad chunked body',
      `POST / HTTP/1.1\r\nHost: x\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n`,
    ],
    ['conflicting lengths', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabc'],
  ])('answers 400 to %s without crashing', async (_name, bytes) => {
    const answer = await raw(gateway.port, bytes);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await stillServes();
  });

  it('survives a client that vanishes mid-body, and a WebSocket upgrade without the token', async () => {
    await raw(
      gateway.port,
      `POST / HTTP/1.1\r\nHost: x\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length: 100000\r\n\r\npartial`,
      true,
    );
    const upgrade = await raw(
      gateway.port,
      `GET / HTTP/1.1\r\nHost: x\r\nSvc-Sandbox-Id: sb1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    expect(upgrade).toMatch(/^HTTP\/1\.1 401 /);
    await stillServes();
  });

  // The SDKs' fetch keeps an idle connection 4 s, on its own clock: a client busy for longer (building a large upload)
  // sends its next request into the connection it kept. At Node's 5 s the gateway had closed it, and the POST was lost.
  it('keeps an idle keep-alive connection across a 6 s pause, and the next POST on it is answered', async () => {
    const { first, second } = await sameConnectionTwice(gateway.port, POST, 'fine', 6_000);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nfine$/);
  }, 20_000);

  it('exits 0 on SIGTERM', async () => {
    expect(await gateway.stop()).toBe(0);
  });
});

describe('gateway --keep-alive-timeout-ms', () => {
  it('closes a keep-alive connection left idle longer, and serves one that comes back sooner', async () => {
    const upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => res.end('fine'));
    });
    const dir = await mkdtemp(join(tmpdir(), 'sk-gw-keepalive-'));
    let short: CliGateway | undefined;
    try {
      const file = join(dir, 'catalog.json');
      await writeFile(
        file,
        JSON.stringify([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: upstream.port, token: TOKEN, state: 'running' }]),
      );
      short = await spawnGateway(['--catalog', `file:${file}`, '--keep-alive-timeout-ms', '1500']);
      const soon = await sameConnectionTwice(short.port, POST, 'fine', 200);
      expect(soon.second).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nfine$/);
      const late = await sameConnectionTwice(short.port, POST, 'fine', 4_000);
      expect(late.first).toMatch(/^HTTP\/1\.1 200 /);
      expect(late.second).toBe('');
      // Closed by the gateway, not before the timeout, and within its one-second tick after it.
      expect(late.closedAfterMs).toBeGreaterThanOrEqual(1_400);
      expect(late.closedAfterMs).toBeLessThan(3_900);
    } finally {
      await short?.stop();
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('gateway command line', () => {
  it.each([
    [[], '--catalog: got (missing); expected memory, file:PATH or redis://'],
    [['--catalog', 'mongodb://x'], 'expected memory, file:PATH or redis://'],
    [['--catalog', 'memory', '--max-header-bytes', 'eighty'], '--max-header-bytes: got "eighty"; expected an integer of at least 1024'],
    [['--catalog', 'memory', '--brand', 'svc'], '--brand: got "svc"; expected a capitalised word'],
    [['--catalog', 'memory', '--bogus'], '--bogus: got (a switch); expected one of --port, --host, --catalog'],
    [['--catalog', 'file:/nonexistent/catalog.json'], 'cannot read it (ENOENT)'],
    [['--catalog', 'memory', '--workers', '2'], '--workers above 1 needs a shared catalog'],
    [['--catalog', 'memory', '--workers', '0'], '--workers: got "0"; expected an integer from 1 to 64'],
    [['--catalog', 'memory', '--listen-backlog', 'lots'], '--listen-backlog: got "lots"; expected an integer from 1 to 65535'],
    [['--catalog', 'memory', '--keep-alive-timeout-ms', '0'], '--keep-alive-timeout-ms: got "0"; expected an integer of at least 1'],
  ])('refuses %j with a clear message', async (args, message) => {
    await expect(spawnGateway(args)).rejects.toThrow(message);
  });
});
