/**
 * Malformed and unending input gets its answer at once, directly and through the gateway: a binary protobuf body
 * (the agent speaks Connect with JSON only, docs/agent.md), a ListDir whose walk would not end, and a body that never
 * completes under a Connect-Timeout-Ms. Each refused form is paired with the legitimate call on the same path.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { MemoryCatalog } from '../../../src/catalog/memory';
import { brandNames } from '../../../src/contract/brand';
import { encodeEnvelope } from '../../../src/contract/connect-envelope';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { type AgentProcess, startHostAgent, tempDir } from './helpers/common';

const TOKEN = 'hostile-input-token';
const SANDBOX = 'sbxhostile';
let root: string;
let agent: AgentProcess;
let gateway: RunningGateway;

beforeAll(async () => {
  root = tempDir('agent-hostile-');
  agent = await startHostAgent({ defaultUser: 'root', accessToken: TOKEN, listTimeoutMs: 300 });
  const catalog = new MemoryCatalog([{ sandboxID: SANDBOX, host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
  gateway = await startGateway({ catalog, brand: 'Svc' });
});

afterAll(async () => {
  await gateway?.close();
  await agent?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

// A deadline passes at the gateway and at the agent at the same moment: through the gateway the answer is a 504
// from either (the gateway's body has its own form), so only the status is compared there.
const ways = [
  ['directly', () => ({ port: agent.port, headers: {} })],
  [
    'through the gateway',
    () => ({
      port: gateway.port,
      headers: { [brandNames('Svc').sandboxIdHeader]: SANDBOX, [brandNames('Svc').sandboxPortHeader]: String(agent.port) },
    }),
  ],
] as const;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: { code?: string; message?: string; entries?: unknown[] };
}

/** A POST whose body is `body`, completed unless `declaredLength` promises more than is ever sent. */
function post(
  via: { port: number; headers: Record<string, string> },
  procedure: string,
  contentType: string,
  body: Buffer | string,
  extra: Record<string, string> = {},
  declaredLength?: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let failure = '';
    const req = http.request(
      {
        host: '127.0.0.1',
        port: via.port,
        path: procedure,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': contentType,
          'connect-protocol-version': '1',
          'x-access-token': TOKEN,
          ...(declaredLength === undefined ? {} : { 'content-length': String(declaredLength) }),
          ...via.headers,
          ...extra,
        },
      },
      (res) => {
        answered = true;
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text.startsWith('{') ? JSON.parse(text) : {} });
          req.destroy();
        });
      },
    );
    // A write cut short once the answer came is expected (the body is refused early); no answer at all is a failure.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
      failure = err.code ?? err.message;
    });
    req.on('close', () => {
      if (!answered) reject(new Error(`${procedure}: the connection closed with no answer (${failure || 'no error'})`));
    });
    if (declaredLength === undefined) req.end(body);
    else req.write(body);
  });
}

const envelope = (json: unknown) => encodeEnvelope(0, Buffer.from(JSON.stringify(json)));

describe.each(ways)('%s', (how, via) => {
  test('a broken binary protobuf body is refused with 415 unimplemented, naming the JSON form; JSON works', async () => {
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x12]);
    const made = path.join(root, `made-${how.replace(/ /g, '-')}`);
    const cases = [
      ['/filesystem.Filesystem/MakeDir', 'application/proto', 'application/json'],
      ['/filesystem.Filesystem/Stat', 'application/proto', 'application/json'],
      ['/process.Process/Start', 'application/connect+proto', 'application/connect+json'],
      ['/process.Process/Start', 'application/grpc', 'application/connect+json'],
    ] as const;
    for (const [procedure, type, accepted] of cases) {
      const r = await post(via(), procedure, type, garbage);
      expect([procedure, type, r.status, r.json.code, r.headers['accept-post']]).toEqual([procedure, type, 415, 'unimplemented', accepted]);
    }
    const ok = await post(via(), '/filesystem.Filesystem/MakeDir', 'application/json', JSON.stringify({ path: made }));
    expect(ok.status).toBe(200);
    expect(fs.statSync(made).isDirectory()).toBe(true);
  });

  test('a ListDir whose walk does not end in time stops with its code; a deep walk of a small tree answers', async () => {
    const endless = await post(via(), '/filesystem.Filesystem/ListDir', 'application/json', JSON.stringify({ path: '/', depth: '1e3' }));
    expect([endless.status, endless.json.code]).toEqual([429, 'resource_exhausted']);
    expect(endless.json.message).toMatch(/listTimeoutMs/);
    const late = await post(via(), '/filesystem.Filesystem/ListDir', 'application/json', JSON.stringify({ path: '/', depth: '1e3' }), {
      'connect-timeout-ms': '100',
    });
    expect(late.status).toBe(504);
    if (how === 'directly') expect(late.json.code).toBe('deadline_exceeded');
    fs.mkdirSync(path.join(root, `deep-${how.replace(/ /g, '-')}/a/b`), { recursive: true });
    const small = await post(via(), '/filesystem.Filesystem/ListDir', 'application/json', JSON.stringify({ path: root, depth: '1e3' }));
    expect(small.status).toBe(200);
    expect(small.json.entries!.length).toBeGreaterThan(2);
  });

  test('a body that never completes is answered deadline_exceeded when its Connect-Timeout-Ms passes; a whole one is served', async () => {
    const deadline = { 'connect-timeout-ms': '300' };
    const made = path.join(root, `never-${how.replace(/ /g, '-')}`);
    const cases = [
      ['/filesystem.Filesystem/MakeDir', 'application/json', `{"path":${JSON.stringify(made)}}`],
      ['/filesystem.Filesystem/Stat', 'application/json', `{"path":${JSON.stringify(root)}}`],
      ['/process.Process/List', 'application/json', '{}'],
      ['/process.Process/Start', 'application/connect+json', envelope({ process: { cmd: '/bin/true' } })],
    ] as const;
    for (const [procedure, type, body] of cases) {
      const whole = Buffer.from(body);
      const cut = await post(via(), procedure, type, whole.subarray(0, 3), deadline, whole.length + 10);
      expect([procedure, cut.status]).toEqual([procedure, 504]);
      if (how === 'directly') expect([procedure, cut.json.code]).toEqual([procedure, 'deadline_exceeded']);
      const served = await post(via(), procedure, type, whole, deadline);
      expect([procedure, served.status]).toEqual([procedure, 200]);
    }
    expect(fs.existsSync(made)).toBe(true);
  });
});

describe('request bodies held in memory', () => {
  const MiB = 1024 * 1024;
  const direct = () => ({ port: agent.port, headers: {} });

  test('a call through the Connect router with a body past 4 MiB is resource_exhausted, declared or chunked; a small one is served', async () => {
    const made = path.join(root, 'router-small');
    const huge = Buffer.alloc(5 * MiB, 0x61);
    const declared = await post(direct(), '/filesystem.Filesystem/MakeDir', 'application/json', huge);
    expect([declared.status, declared.json.code]).toEqual([429, 'resource_exhausted']);
    const chunked = await post(direct(), '/process.Process/SendSignal', 'application/json', huge, { 'transfer-encoding': 'chunked' });
    expect([chunked.status, chunked.json.code]).toEqual([429, 'resource_exhausted']);
    const ok = await post(direct(), '/filesystem.Filesystem/MakeDir', 'application/json', JSON.stringify({ path: made }));
    expect(ok.status).toBe(200);
    expect(fs.statSync(made).isDirectory()).toBe(true);
  });

  test('a client that asks for Connection: close and writes its whole refused body before reading still gets the answer', async () => {
    // Like a client that sends everything first (many scripting libraries do): the body is refused at its head, and
    // the answer must still be there once the client reads, not lost to a reset of a connection closed under it.
    const s = net.connect(agent.port, '127.0.0.1');
    const received: Buffer[] = [];
    let failure = '';
    s.on('error', (err: NodeJS.ErrnoException) => (failure = err.code ?? err.message));
    const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        s.once('connect', resolve);
        s.once('error', reject);
      });
      s.pause();
      s.write(
        `POST /filesystem.Filesystem/MakeDir HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: application/json\r\nConnect-Protocol-Version: 1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length: ${6 * MiB}\r\n\r\n`,
      );
      for (let i = 0; i < 6; i++) {
        await new Promise<void>((resolve) => s.write(Buffer.alloc(MiB, 0x20), () => resolve()));
        await new Promise((r) => setTimeout(r, 20));
      }
      s.on('data', (d: Buffer) => received.push(d));
      s.resume();
      await closed;
    } finally {
      s.destroy();
    }
    const text = Buffer.concat(received).toString('latin1');
    expect([text.split('\r\n', 1)[0], failure]).toEqual(['HTTP/1.1 429 Too Many Requests', '']);
    expect(text).toMatch(/"code":"resource_exhausted"/);
  });

  test('bodies that never finish on many connections: past 16 MiB held in all, the next is resource_exhausted; other calls are served', async () => {
    // Six bodies of 3.5 MiB each, every one under the per-call limit, 21 MiB together: not all of them can be held.
    const sockets: net.Socket[] = [];
    const answers: string[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const s = net.connect(agent.port, '127.0.0.1');
        sockets.push(s);
        answers.push('');
        s.on('data', (d: Buffer) => (answers[i] += d.toString('latin1')));
        s.on('error', () => undefined);
        s.write(
          `POST /filesystem.Filesystem/MakeDir HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nConnect-Protocol-Version: 1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length: ${4 * MiB}\r\n\r\n`,
        );
        s.write(Buffer.alloc(3.5 * MiB, 0x20));
      }
      const deadline = Date.now() + 20_000;
      while (!answers.some((a) => a.startsWith('HTTP/1.1 429')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const refused = answers.filter((a) => a.startsWith('HTTP/1.1 429'));
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]).toMatch(/"code":"resource_exhausted".*retry later/);
      const made = path.join(root, 'while-receiving');
      const ok = await post(direct(), '/filesystem.Filesystem/MakeDir', 'application/json', JSON.stringify({ path: made }));
      expect(ok.status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
    // Once those connections are gone, what they held is free again: a 3.5 MiB body is read whole (and answered).
    const padded = Buffer.from(JSON.stringify({ path: path.join(root, 'after') }).padEnd(3.5 * MiB, ' '));
    const after = await post(direct(), '/filesystem.Filesystem/MakeDir', 'application/json', padded);
    expect(after.status).toBe(200);
  });
});
