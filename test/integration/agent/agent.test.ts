/**
 * The agent in-process, called with the Connect reference client for Node and with raw HTTP, over a fixture
 * tree with every kind of entry (see fixture.ts).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { FileType } from '../../../src/contract/gen/filesystem_pb';
import {
  type AgentProcess,
  basic,
  connectClient,
  createUser,
  rawCall,
  rawCallEarlyAnswer,
  startHostAgent,
  tempDir,
} from './helpers/common';
import { BAD_NAME_TEXT, buildFixture, SPARSE_SIZE } from './helpers/fs-fixture';

let root: string;
let agent: AgentProcess;
let url: string;
let user: ReturnType<typeof createUser>;

beforeAll(async () => {
  root = tempDir('agent-it-');
  user = createUser('skagent', path.join(root, 'home'));
  buildFixture(root, user);
  agent = await startHostAgent({ defaultUser: 'root' });
  url = `http://127.0.0.1:${agent.port}`;
});

afterAll(async () => {
  await agent?.stop();
  user?.remove();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const stat = async (p: string, headers: Record<string, string> = {}) => rawCall(url, 'Stat', JSON.stringify({ path: p }), headers);
const list = async (p: string, depth?: number, headers: Record<string, string> = {}) =>
  rawCall(url, 'ListDir', JSON.stringify(depth === undefined ? { path: p } : { path: p, depth }), headers);

describe('EntryInfo over raw HTTP', () => {
  test('a regular file has every field, and no others', async () => {
    const res = await stat(path.join(root, 'file.txt'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const st = fs.statSync(path.join(root, 'file.txt'));
    expect(res.json).toEqual({
      entry: {
        name: 'file.txt',
        type: 'FILE_TYPE_FILE',
        path: path.join(root, 'file.txt'),
        size: 5,
        mode: 0o644,
        permissions: '-rw-r--r--',
        owner: 'root',
        group: 'root',
        modifiedTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?Z$/),
        metadata: { color: 'blue', empty: '' },
      },
    });
    expect(Date.parse(res.json.entry.modifiedTime)).toBe(Math.floor(st.mtimeMs));
  });

  test('metadata: a file with an attribute name that is not UTF-8 shows none (the addon cannot list it), and the call succeeds', async () => {
    const res = await stat(path.join(root, 'oddattr.txt'));
    expect(res.status).toBe(200);
    expect(res.json.entry.metadata).toEqual({});
  });

  test('the brand picks the namespace', async () => {
    const e2b = await startHostAgent({ defaultUser: 'root', brand: 'E2b' });
    try {
      const res = await rawCall(`http://127.0.0.1:${e2b.port}`, 'Stat', JSON.stringify({ path: path.join(root, 'file.txt') }));
      expect(res.json.entry.metadata).toEqual({ k: 'v' });
    } finally {
      await e2b.stop();
    }
  });

  test('a directory', async () => {
    const e = (await stat(path.join(root, 'a'))).json.entry;
    expect(e).toMatchObject({ name: 'a', type: 'FILE_TYPE_DIRECTORY', mode: 0o755, permissions: 'drwxr-xr-x', metadata: {} });
    expect(e.symlinkTarget).toBeUndefined();
  });

  test('symlinks: target type, resolved target, Lrwxrwxrwx; broken and looping links are UNSPECIFIED', async () => {
    const toFile = (await stat(path.join(root, 'link-file'))).json.entry;
    expect(toFile).toMatchObject({
      name: 'link-file',
      type: 'FILE_TYPE_FILE',
      path: path.join(root, 'link-file'),
      size: 'file.txt'.length,
      mode: 0o644,
      permissions: 'Lrwxrwxrwx',
      symlinkTarget: path.join(root, 'file.txt'),
      metadata: { color: 'blue', empty: '' },
    });
    const toDir = (await stat(path.join(root, 'link-dir'))).json.entry;
    expect(toDir).toMatchObject({ type: 'FILE_TYPE_DIRECTORY', symlinkTarget: path.join(root, 'a'), mode: 0o755 });
    const nowhere = (await stat(path.join(root, 'link-nowhere'))).json.entry;
    expect(nowhere).toMatchObject({ type: 'FILE_TYPE_UNSPECIFIED', symlinkTarget: path.join(root, 'missing'), mode: 0, metadata: {} });
    const loop = (await stat(path.join(root, 'loop1'))).json.entry;
    expect(loop).toMatchObject({ type: 'FILE_TYPE_UNSPECIFIED', symlinkTarget: path.join(root, 'loop2'), mode: 0 });
  });

  test('owner and group are names; a numeric id when no user has it', async () => {
    const e = (await stat(path.join(root, 'owned.txt'))).json.entry;
    expect(e).toMatchObject({ owner: user.name, group: user.name, mode: 0o640, permissions: '-rw-r-----' });
    const orphan = path.join(root, 'orphan.txt');
    fs.writeFileSync(orphan, '');
    fs.chownSync(orphan, 54321, 54322);
    try {
      expect((await stat(orphan)).json.entry).toMatchObject({ owner: '54321', group: '54322' });
    } finally {
      fs.rmSync(orphan);
    }
  });

  test('size of a sparse large file is exact; above 2^53-1 it is a decimal string', async () => {
    expect((await stat(path.join(root, 'sparse.bin'))).json.entry.size).toBe(SPARSE_SIZE);
    // ext4 stops at 16 TiB; tmpfs takes sizes past 2^53, so the string form is checked there when /dev/shm exists.
    const shm = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/agent-it-') : undefined;
    if (!shm) {
      console.warn('no /dev/shm: size above 2^53-1 checked by the unit tests only');
      return;
    }
    try {
      const huge = path.join(shm, 'huge.bin');
      // Node's ftruncate takes only safe integers; coreutils' truncate takes the exact size.
      const made = spawnSync('truncate', ['-s', '9007199254740994', huge]);
      const res = await stat(huge);
      if (made.status === 0) {
        expect(res.json.entry.size).toBe('9007199254740994');
        expect(res.text).toContain('"size":"9007199254740994"');
      } else {
        console.warn(`/dev/shm refused a 2^53+2 byte file (${made.stderr}): the string form is checked by the unit tests only`);
      }
    } finally {
      fs.rmSync(shm, { recursive: true, force: true });
    }
  });

  test('modifiedTime keeps nanoseconds, dropping zeros in 3-digit steps', async () => {
    const t = async (n: string) => (await stat(path.join(root, n))).json.entry.modifiedTime;
    expect(await t('ns.txt')).toBe('2023-11-14T22:13:20.123456789Z');
    expect(await t('us.txt')).toBe('2023-11-14T22:13:20.123456Z');
    expect(await t('ms.txt')).toBe('2023-11-14T22:13:20.500Z');
    expect(await t('whole.txt')).toBe('2023-11-14T22:13:20Z');
  });

  test('a name that is not UTF-8 is listed with bytes escaped as U+EF80..U+EFFF, and Stat takes it back', async () => {
    const res = await list(root);
    const bad = res.json.entries.find((e: { name: string }) => e.name.startsWith('bad-'));
    expect(bad.name).toBe(BAD_NAME_TEXT);
    expect(Buffer.from(res.text).includes(Buffer.from('"name":"bad-\uefff\ueffe.txt"'))).toBe(true);
    expect(bad.metadata).toEqual({}); // the xattr addon takes UTF-8 paths only: such a path shows no metadata
    const again = await rawCall(url, 'Stat', JSON.stringify({ path: bad.path }));
    expect(again.status).toBe(200);
    expect(again.json.entry).toEqual(bad);
  });
});

describe('ListDir over raw HTTP', () => {
  const names = (res: { json: { entries: Array<{ path: string }> } }, base = root) =>
    res.json.entries.map((e) => path.relative(base, e.path));

  test('depth absent or 0 lists direct children, sorted bytewise, without the directory itself', async () => {
    const expected = [
      'Zeta.txt',
      'a',
      BAD_NAME_TEXT,
      'file.txt',
      'home',
      'link-dir',
      'link-file',
      'link-nowhere',
      'loop1',
      'loop2',
      'ms.txt',
      'ns.txt',
      'oddattr.txt',
      'owned.txt',
      'sparse.bin',
      'us.txt',
      'whole.txt',
    ];
    expect(names(await list(root))).toEqual(expected);
    expect(names(await list(root, 0))).toEqual(expected);
    expect(names(await list(root, 1))).toEqual(expected);
  });

  test('depth N lists N levels, depth-first pre-order; symlinked directories are not descended', async () => {
    const two = names(await list(path.join(root, 'a'), 2), path.join(root, 'a'));
    expect(two).toEqual(['b', 'b/c', 'b/mid.txt', 'top.txt']);
    const deep = names(await list(root, 10));
    expect(deep.slice(0, 7)).toEqual(['Zeta.txt', 'a', 'a/b', 'a/b/c', 'a/b/c/deep.txt', 'a/b/mid.txt', 'a/top.txt']);
    expect(deep).toContain('link-dir');
    expect(deep.some((n) => n.startsWith('link-dir/'))).toBe(false);
    expect(deep).toContain('home/notes.txt');
  });

  test('a symlink as the listed path is followed; entry paths stay under the path as requested', async () => {
    const res = await list(path.join(root, 'link-dir'));
    expect(res.json.entries.map((e: { path: string }) => e.path)).toEqual([
      path.join(root, 'link-dir/b'),
      path.join(root, 'link-dir/top.txt'),
    ]);
  });

  test('errors: not found, not a directory, symlink loop', async () => {
    const missing = await list(path.join(root, 'nope'));
    expect([missing.status, missing.json.code]).toEqual([404, 'not_found']);
    const file = await list(path.join(root, 'file.txt'));
    expect([file.status, file.json.code]).toEqual([400, 'invalid_argument']);
    expect(file.json.message).toContain('not a directory');
    const loop = await list(path.join(root, 'loop1'));
    expect([loop.status, loop.json.code]).toEqual([400, 'invalid_argument']);
    const dangling = await list(path.join(root, 'link-nowhere'));
    expect(dangling.json.code).toBe('not_found');
  });

  test('the entry limit answers resource_exhausted', async () => {
    const small = await startHostAgent({ defaultUser: 'root', maxEntries: 5 });
    try {
      const res = await rawCall(`http://127.0.0.1:${small.port}`, 'ListDir', JSON.stringify({ path: root }));
      expect([res.status, res.json.code]).toEqual([429, 'resource_exhausted']);
      expect(res.json.message).toContain('--max-entries');
      const ok = await rawCall(`http://127.0.0.1:${small.port}`, 'ListDir', JSON.stringify({ path: path.join(root, 'a'), depth: 2 }));
      expect(ok.json.entries).toHaveLength(4);
    } finally {
      await small.stop();
    }
  });
});

describe('users and paths', () => {
  test("relative paths and ~ resolve against the Basic user's home; no header means the default user", async () => {
    const auth = { authorization: basic(user.name) };
    expect((await stat('notes.txt', auth)).json.entry.path).toBe(path.join(root, 'home/notes.txt'));
    expect((await stat('~/notes.txt', auth)).json.entry.path).toBe(path.join(root, 'home/notes.txt'));
    expect((await stat('~', auth)).json.entry.path).toBe(path.join(root, 'home'));
    expect((await stat('', auth)).json.entry.path).toBe(path.join(root, 'home'));
    expect((await list('.', 1, auth)).json.entries.map((e: { name: string }) => e.name)).toEqual(['notes.txt']);
    const rootHome = fs.realpathSync(require('node:os').userInfo().homedir);
    expect((await stat('~')).json.entry.path).toBe(rootHome);
  });

  test('an unknown user or a malformed Authorization is unauthenticated', async () => {
    const unknown = await stat('x', { authorization: basic('no-such-user-here') });
    expect([unknown.status, unknown.json.code]).toEqual([401, 'unauthenticated']);
    const bearer = await stat('x', { authorization: 'Bearer abc' });
    expect([bearer.status, bearer.json.code]).toEqual([401, 'unauthenticated']);
  });
});

describe('the Connect protocol', () => {
  test('Connect-Protocol-Version missing or not 1 is invalid_argument', async () => {
    const missing = await rawCall(url, 'Stat', '{}', { 'connect-protocol-version': '' });
    expect([missing.status, missing.json.code]).toEqual([400, 'invalid_argument']);
    const two = await rawCall(url, 'Stat', '{}', { 'connect-protocol-version': '2' });
    expect([two.status, two.json.code]).toEqual([400, 'invalid_argument']);
  });

  test('unknown fields, wrong types, malformed JSON, NUL bytes are invalid_argument', async () => {
    const cases = [
      '{"path":"/","bogus":1}',
      '{"path":5}',
      '{"path":"/","depth":-1}',
      '{"path":"/","depth":1.5}',
      '{"path":"/","depth":true}',
      '[1]',
      '{"path":',
      'nul\u0000',
      '"str"',
    ];
    for (const body of cases) {
      const res = await rawCall(url, 'ListDir', body);
      expect([body, res.status, res.json.code]).toEqual([body, 400, 'invalid_argument']);
    }
    const nul = await stat('/tmp\u0000/x');
    expect([nul.status, nul.json.code]).toEqual([400, 'invalid_argument']);
    expect(nul.json.message).toContain('NUL');
    const latin = await rawCall(url, 'Stat', Buffer.from([0x7b, 0x22, 0x70, 0x61, 0x74, 0x68, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
    expect(latin.json.code).toBe('invalid_argument');
  });

  test('protobuf JSON forms are accepted: null fields, depth as a string, an empty body', async () => {
    expect((await rawCall(url, 'ListDir', JSON.stringify({ path: path.join(root, 'a'), depth: '2' }))).json.entries).toHaveLength(4);
    expect((await rawCall(url, 'ListDir', JSON.stringify({ path: path.join(root, 'a'), depth: null }))).json.entries).toHaveLength(2);
    expect((await rawCall(url, 'Stat', '')).status).toBe(200);
  });

  test('a huge body is resource_exhausted, and the agent keeps serving', async () => {
    const huge = JSON.stringify({ path: 'x'.repeat(2 * 1024 * 1024) });
    const res = await rawCallEarlyAnswer(url, 'Stat', huge);
    expect([res.status, res.json.code]).toEqual([429, 'resource_exhausted']);
    const chunked = await rawCallEarlyAnswer(url, 'Stat', huge, { 'transfer-encoding': 'chunked' });
    expect(chunked.json.code).toBe('resource_exhausted');
    const bomb = zlib.gzipSync(Buffer.from(JSON.stringify({ path: '/'.repeat(10 * 1024 * 1024) })));
    const zipped = await rawCallEarlyAnswer(url, 'Stat', bomb, { 'content-encoding': 'gzip' });
    expect(zipped.json.code).toBe('resource_exhausted');
    expect((await stat(root)).status).toBe(200);
  });

  test('gzip request bodies are accepted; unknown encodings are unimplemented', async () => {
    const res = await rawCall(url, 'Stat', zlib.gzipSync(JSON.stringify({ path: root })), { 'content-encoding': 'gzip' });
    expect(res.json.entry.path).toBe(root);
    const odd = await rawCall(url, 'Stat', '{}', { 'content-encoding': 'zstd' });
    expect(odd.json.code).toBe('unimplemented');
  });

  test('Content-Type other than JSON is 415; other methods 405; unknown procedures 404', async () => {
    const proto = await rawCall(url, 'Stat', '', { 'content-type': 'application/proto' });
    expect(proto.status).toBe(415);
    const get = await fetch(`${url}/filesystem.Filesystem/Stat`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const other = await rawCall(url, 'Chmod', '{}');
    expect(other.status).toBe(404);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(204);
  });

  test('Connect-Timeout-Ms bounds the call: deadline_exceeded; a malformed value is invalid_argument', async () => {
    const big = tempDir('agent-it-deadline-');
    try {
      for (let d = 0; d < 40; d++) {
        fs.mkdirSync(path.join(big, `d${d}`));
        for (let f = 0; f < 200; f++) fs.writeFileSync(path.join(big, `d${d}`, `f${f}`), '');
      }
      const res = await rawCall(url, 'ListDir', JSON.stringify({ path: big, depth: 2 }), { 'connect-timeout-ms': '1' });
      expect([res.status, res.json.code]).toEqual([504, 'deadline_exceeded']);
      const full = await rawCall(url, 'ListDir', JSON.stringify({ path: big, depth: 2 }), { 'connect-timeout-ms': '60000' });
      expect(full.json.entries).toHaveLength(40 * 201);
    } finally {
      fs.rmSync(big, { recursive: true, force: true });
    }
    const bad = await rawCall(url, 'Stat', '{}', { 'connect-timeout-ms': 'soon' });
    expect([bad.status, bad.json.code]).toEqual([400, 'invalid_argument']);
  });
});

describe('the access token', () => {
  let guarded: AgentProcess;
  let gurl: string;
  beforeAll(async () => {
    guarded = await startHostAgent({ defaultUser: 'root', accessToken: 'sekret-token' });
    gurl = `http://127.0.0.1:${guarded.port}`;
  });
  afterAll(() => guarded.stop());

  test('missing or wrong X-Access-Token is 401 unauthenticated; the right one passes', async () => {
    const body = JSON.stringify({ path: root });
    const none = await rawCall(gurl, 'Stat', body);
    expect([none.status, none.json.code]).toEqual([401, 'unauthenticated']);
    const wrong = await rawCall(gurl, 'Stat', body, { 'x-access-token': 'sekret-tokeN' });
    expect([wrong.status, wrong.json.code]).toEqual([401, 'unauthenticated']);
    const right = await rawCall(gurl, 'Stat', body, { 'x-access-token': 'sekret-token' });
    expect(right.status).toBe(200);
  });

  test('the Connect client with the token header', async () => {
    const client = connectClient(gurl);
    await expect(client.stat({ path: root })).rejects.toMatchObject({ code: Code.Unauthenticated });
    const res = await client.stat({ path: root }, { headers: { 'x-access-token': 'sekret-token' } });
    expect(res.entry?.path).toBe(root);
  });
});

describe('the Connect reference client for Node', () => {
  test('Stat decodes every field', async () => {
    const client = connectClient(url);
    const { entry } = await client.stat({ path: path.join(root, 'link-file') });
    expect(entry).toBeDefined();
    expect(entry!.name).toBe('link-file');
    expect(entry!.type).toBe(FileType.FILE);
    expect(entry!.size).toBe(BigInt('file.txt'.length));
    expect(entry!.mode).toBe(0o644);
    expect(entry!.permissions).toBe('Lrwxrwxrwx');
    expect(entry!.symlinkTarget).toBe(path.join(root, 'file.txt'));
    expect(entry!.metadata).toEqual({ color: 'blue', empty: '' });
    const ns = await client.stat({ path: path.join(root, 'ns.txt') });
    expect(ns.entry!.modifiedTime!.nanos).toBe(123456789);
    expect(timestampDate(ns.entry!.modifiedTime!).toISOString()).toBe('2023-11-14T22:13:20.123Z');
    const sparse = await client.stat({ path: path.join(root, 'sparse.bin') });
    expect(sparse.entry!.size).toBe(BigInt(SPARSE_SIZE));
  });

  test('ListDir with depth, user header and timeout', async () => {
    const client = connectClient(url);
    const res = await client.listDir({ path: '.', depth: 1 }, { headers: { authorization: basic(user.name) }, timeoutMs: 10_000 });
    expect(res.entries.map((e) => e.name)).toEqual(['notes.txt']);
    const all = await client.listDir({ path: root, depth: 4 });
    const byName = new Map(all.entries.map((e) => [e.name, e]));
    expect(byName.get('link-dir')!.type).toBe(FileType.DIRECTORY);
    expect(byName.get('link-nowhere')!.type).toBe(FileType.UNSPECIFIED);
    expect(byName.get('deep.txt')!.path).toBe(path.join(root, 'a/b/c/deep.txt'));
    expect(byName.get('owned.txt')!.owner).toBe(user.name);
    expect(byName.get('a')!.symlinkTarget).toBeUndefined();
  });

  test('errors arrive as ConnectError codes', async () => {
    const client = connectClient(url);
    const err = await client.stat({ path: path.join(root, 'nope') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    await expect(client.listDir({ path: path.join(root, 'file.txt') })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(client.stat({ path: 'x' }, { headers: { authorization: basic('nobody-at-all') } })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });

  test('a non-UTF-8 name round-trips through the client', async () => {
    const client = connectClient(url);
    const res = await client.listDir({ path: root });
    const bad = res.entries.find((e) => e.name.startsWith('bad-'))!;
    expect(bad.name).toBe(BAD_NAME_TEXT);
    const again = await client.stat({ path: bad.path });
    expect(again.entry!.name).toBe(BAD_NAME_TEXT);
    expect(again.entry!.size).toBe(3n);
  });
});
