/**
 * What the platform and hostile or broken clients do at the edges: /init's token rules, /files with bad paths,
 * unwritable directories, cut-short bodies and signed URLs, malformed HTTP, early answers to bodies still being
 * sent, and the shared memory budget of ListDir answers.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { type AgentProcess, createUser, startHostAgent, tempDir } from './helpers/common';

let root: string;
let agent: AgentProcess;
let url: string;
let user: ReturnType<typeof createUser>;
const TOKEN = 'edge-token-1';

beforeAll(async () => {
  root = tempDir('agent-edges-');
  fs.chmodSync(root, 0o755);
  user = createUser('skedge', path.join(root, 'home'));
  fs.mkdirSync(user.home);
  fs.chownSync(user.home, user.uid, user.gid);
  fs.mkdirSync(path.join(root, 'locked'), { mode: 0o755 }); // root's: the user may not write here
  agent = await startHostAgent({
    defaultUser: 'root',
    headTimeoutMs: 500,
    stallTimeoutMs: 1000,
    maxResponseBytes: 1024 * 1024,
  });
  url = `http://127.0.0.1:${agent.port}`;
});

afterAll(async () => {
  await agent?.stop();
  user?.remove();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const init = (body: unknown, token?: string) =>
  fetch(`${url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-access-token': token } : {}) },
    body: JSON.stringify(body),
  });
const auth = { 'x-access-token': TOKEN };

describe('/init', () => {
  test('sets the token once; changing it needs the current one; bad fields change nothing', async () => {
    expect((await init({ accessToken: 'tök' })).status).toBe(400); // not ASCII: could never authenticate
    expect((await init({ accessToken: TOKEN, defaultUser: user.name, envVars: { A: '1' } })).status).toBe(204);
    const stolen = await init({ accessToken: 'attacker-token' });
    expect(stolen.status).toBe(401);
    expect((await init({ accessToken: 'x', defaultUser: 'no-such-user-xyz' }, TOKEN)).status).toBe(400);
    // The refused calls changed nothing: the old token still works, the env is still A=1.
    const envs = await fetch(`${url}/envs`, { headers: auth });
    expect(await envs.json()).toEqual({ A: '1' });
    expect((await fetch(`${url}/envs`)).status).toBe(401);
    expect(
      (
        await init(
          { accessToken: TOKEN, defaultUser: user.name, envVars: { A: '1' }, timestamp: '2026-01-01T00:00:00Z', lifecycleID: 'x' },
          TOKEN,
        )
      ).status,
    ).toBe(204);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(204);
  });
});

describe('/files', () => {
  const upload = (query: string, body: Buffer | string, headers: Record<string, string> = {}) =>
    fetch(`${url}/files?${query}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...auth, ...headers }, body });

  test("octet-stream and gzip uploads are written with the user's ownership; GET streams them back with Content-Length", async () => {
    const plain = await upload('path=plain.txt', 'plain body');
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual([{ path: path.join(user.home, 'plain.txt'), name: 'plain.txt', type: 'file' }]);
    expect(fs.statSync(path.join(user.home, 'plain.txt')).uid).toBe(user.uid);
    const gz = await upload('path=gz.txt', zlib.gzipSync('zipped body'), { 'content-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    const back = await fetch(`${url}/files?path=gz.txt`, { headers: auth });
    expect(back.headers.get('content-length')).toBe('11');
    expect(await back.text()).toBe('zipped body');
  });

  test('404 for a missing file, 400 for a directory or no path, 403 where the user may not write, 400 for ".."', async () => {
    expect((await fetch(`${url}/files?path=missing.txt`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${url}/files?path=${root}`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${url}/files`, { headers: auth })).status).toBe(400);
    const locked = await upload(`path=${root}/locked/x.txt`, 'x');
    expect(locked.status).toBe(403);
    expect(((await locked.json()) as { message: string }).message).toMatch(/may not write/);
    expect(fs.readdirSync(path.join(root, 'locked'))).toEqual([]);
    const dots = await upload('path=../escape.txt', 'x');
    expect(dots.status).toBe(400);
    expect(fs.existsSync(path.join(root, 'escape.txt'))).toBe(false);
  });

  test('a multipart body cut short leaves nothing at the destination (and no temporary file)', async () => {
    const dest = path.join(user.home, 'cut.bin');
    const boundary = 'xxBOUNDARYxx';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${dest}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const socket = net.connect(agent.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /files HTTP/1.1\r\nHost: x\r\nX-Access-Token: ${TOKEN}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n${head}`,
    );
    socket.write(Buffer.alloc(256 * 1024, 1));
    await new Promise((r) => setTimeout(r, 300));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect(fs.existsSync(dest)).toBe(false);
    expect(fs.readdirSync(user.home).filter((n) => n.endsWith('.upload'))).toEqual([]);
    expect((await fetch(`${url}/health`)).status).toBe(204);
  });

  test('signed URLs: a valid signature needs no token; a wrong or expired one is 401', async () => {
    const sign = (p: string, op: string, u: string, exp?: number) =>
      `v1_${createHash('sha256')
        .update(`${p}:${op}:${u}:${TOKEN}${exp === undefined ? '' : `:${exp}`}`)
        .digest('base64')
        .replace(/=+$/, '')}`;
    const p = 'signed.txt';
    const w = await fetch(`${url}/files?path=${p}&signature=${encodeURIComponent(sign(p, 'write', ''))}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'signed',
    });
    expect(w.status).toBe(200);
    const exp = Math.floor(Date.now() / 1000) + 60;
    const r = await fetch(`${url}/files?path=${p}&signature=${encodeURIComponent(sign(p, 'read', '', exp))}&signature_expiration=${exp}`);
    expect(await r.text()).toBe('signed');
    expect((await fetch(`${url}/files?path=${p}&signature=${encodeURIComponent(sign(p, 'write', ''))}`)).status).toBe(401); // a write signature cannot read
    const old = Math.floor(Date.now() / 1000) - 1;
    const expired = await fetch(
      `${url}/files?path=${p}&signature=${encodeURIComponent(sign(p, 'read', '', old))}&signature_expiration=${old}`,
    );
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { message: string }).message).toMatch(/expired/);
  });
});

describe('the rest of the filesystem service', () => {
  const call = (procedure: string, body: unknown, asUser?: string) =>
    fetch(`${url}/filesystem.Filesystem/${procedure}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        ...auth,
        ...(asUser ? { authorization: `Basic ${Buffer.from(`${asUser}:`).toString('base64')}` } : {}),
      },
      body: JSON.stringify(body),
    });

  test('MakeDir makes missing parents owned by the request user; existing is already_exists; Move and Remove', async () => {
    const made = await call('MakeDir', { path: 'a/b/c' }, user.name);
    expect(made.status).toBe(200);
    expect(((await made.json()) as { entry: { path: string; type: string } }).entry).toMatchObject({
      path: path.join(user.home, 'a/b/c'),
      type: 'FILE_TYPE_DIRECTORY',
    });
    for (const d of ['a', 'a/b', 'a/b/c']) expect(fs.statSync(path.join(user.home, d)).uid).toBe(user.uid);
    const again = await call('MakeDir', { path: 'a/b/c' }, user.name);
    expect([again.status, ((await again.json()) as { code: string }).code]).toEqual([409, 'already_exists']);
    const moved = await call('Move', { source: 'a/b/c', destination: 'x/y' }, user.name);
    expect(moved.status).toBe(200);
    expect(fs.existsSync(path.join(user.home, 'x/y'))).toBe(true);
    expect(fs.statSync(path.join(user.home, 'x')).uid).toBe(user.uid);
    const missing = await call('Move', { source: 'nope', destination: 'z' }, user.name);
    expect([missing.status, ((await missing.json()) as { code: string }).code]).toEqual([404, 'not_found']);
    expect((await call('Remove', { path: 'x' }, user.name)).status).toBe(200);
    expect(fs.existsSync(path.join(user.home, 'x'))).toBe(false);
    // Already gone: nothing to remove, success (as E2B's envd answers).
    expect((await call('Remove', { path: 'x' }, user.name)).status).toBe(200);
    // Removing under a file is still an error: the path cannot exist, and the caller named it wrongly.
    fs.writeFileSync(path.join(user.home, 'plain'), '');
    expect((await call('Remove', { path: 'plain/under' }, user.name)).status).not.toBe(200);
  });

  test('CreateWatcher / GetWatcherEvents / RemoveWatcher', async () => {
    const created = await call('CreateWatcher', { path: user.home }, user.name);
    const { watcherId } = (await created.json()) as { watcherId: string };
    fs.writeFileSync(path.join(user.home, 'watched.txt'), 'w');
    let events: Array<{ name: string; type: string }> = [];
    for (let i = 0; i < 50 && !events.some((e) => e.name === 'watched.txt'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      events = events.concat(
        ((await (await call('GetWatcherEvents', { watcherId })).json()) as { events?: Array<{ name: string; type: string }> }).events ?? [],
      );
    }
    expect(events).toContainEqual({ name: 'watched.txt', type: 'EVENT_TYPE_CREATE' });
    expect((await call('RemoveWatcher', { watcherId })).status).toBe(200);
    expect((await call('GetWatcherEvents', { watcherId })).status).toBe(404);
  });
});

/** Sends raw bytes, returns everything the agent answers until it closes (or `waitMs`). */
function rawExchange(bytes: Buffer | string, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(agent.port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('error', () => {});
    const done = () => resolve(out);
    socket.on('close', done);
    setTimeout(() => {
      socket.destroy();
      done();
    }, waitMs);
    socket.write(bytes);
  });
}

describe('malformed HTTP', () => {
  test('a head over 16 KiB is 431, a malformed one 400, a slow one 408, each with a Connect JSON body', async () => {
    const big = await rawExchange(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expect(big).toMatch(/"code":"resource_exhausted"/);
    const bad = await rawExchange('GARBAGE\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(bad).toMatch(/"code":"invalid_argument"/);
    const slow = await rawExchange('GET /health HTTP/1.1\r\nHost: x\r\n', 4000);
    expect(slow).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow).toMatch(/"code":"deadline_exceeded"/);
  });

  test('an early answer to a body still being sent reaches the client (no reset)', async () => {
    for (let i = 0; i < 5; i++) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${url}/filesystem.Filesystem/ListDir`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...auth },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 4 * 1024 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(status).toBe(429);
    }
  });

  test('depth 1e-400 is not an integer', async () => {
    const res = await fetch(`${url}/filesystem.Filesystem/ListDir`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...auth },
      body: `{"path":"${root}","depth":1e-400}`,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/1e-400 is not an integer/);
  });
});

describe('the ListDir memory budget', () => {
  test('an answer larger than the shared budget is resource_exhausted', async () => {
    const dir = path.join(root, 'some');
    fs.mkdirSync(dir);
    for (let i = 0; i < 6000; i++) fs.writeFileSync(path.join(dir, `file-${String(i).padStart(5, '0')}.txt`), '');
    const authed = await fetch(`${url}/filesystem.Filesystem/ListDir`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...auth },
      body: JSON.stringify({ path: dir }),
    });
    expect(authed.status).toBe(429);
    expect(((await authed.json()) as { message: string }).message).toMatch(/--max-response-bytes \(1048576\)/);
  });
});
