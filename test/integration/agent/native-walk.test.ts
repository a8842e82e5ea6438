/**
 * ListDir's native walk (src/agent/filesystem/native-walk.c, as built into dist/) gives the same bytes as the node:fs
 * walk on a tree of awkward entries: names that are not UTF-8 or need JSON escapes, symlinks of every kind (never
 * descended), metadata, a FIFO, mtimes before 1970 and with nanoseconds, a sparse 1 TiB file, paths that pass the
 * kernel's PATH_MAX, and batch boundaries falling inside descents; and the same errors and limits.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildFixture } from './helpers/fs-fixture';
import { REPO } from './helpers/common';

const DIST = path.join(REPO, 'dist', 'src', 'agent');
const { walk, nodeWalkFs } = require(path.join(DIST, 'filesystem', 'walk.js')) as typeof import('../../../src/agent/filesystem/walk');
const { nativeWalkUnavailable } = require(
  path.join(DIST, 'filesystem', 'native-walk.js'),
) as typeof import('../../../src/agent/filesystem/native-walk');
const { JsonChunks } = require(
  path.join(DIST, 'filesystem', 'json-chunks.js'),
) as typeof import('../../../src/agent/filesystem/json-chunks');
const { ResponseBudget } = require(
  path.join(DIST, 'filesystem', 'fast-path.js'),
) as typeof import('../../../src/agent/filesystem/fast-path');
const { BufferPool, POOL_BUFFER_BYTES } = require(path.join(DIST, 'buffer-pool.js')) as typeof import('../../../src/agent/buffer-pool');
const { Accounts } = require(path.join(DIST, 'accounts.js')) as typeof import('../../../src/agent/accounts');
const { AgentError } = require(path.join(DIST, 'errors.js')) as typeof import('../../../src/agent/errors');

const ctx = { accounts: new Accounts(), xattrPrefix: 'user.svc.' };
let root: string;

type Limits = { maxEntries: number; stopReason(): InstanceType<typeof AgentError> | undefined };
const noLimits: Limits = { maxEntries: 1_000_000, stopReason: () => undefined };

/** The listing's bytes, or the error's code and message. */
async function list(dir: string, depth: number, native: boolean, limits: Limits = noLimits): Promise<string> {
  const out = new JsonChunks();
  try {
    await walk(Buffer.from(dir), depth, ctx, limits, out, native ? undefined : nodeWalkFs);
  } catch (err) {
    out.dispose();
    if (!(err instanceof AgentError)) throw err;
    return `error ${err.code}: ${err.message}`;
  }
  const chunks: Buffer[] = [];
  await out.writeTo({ write: (b: Buffer) => (chunks.push(b), true), end: () => undefined, destroyed: false } as never);
  return Buffer.concat(chunks).toString('latin1');
}

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sk-native-walk-')));
  buildFixture(root, { uid: 1, gid: 1 });
  for (const name of [
    'quote"back\\slash',
    'new\nline',
    'tab\tand\u0001ctl',
    'caf\u00e9',
    '\u65e5\u672c',
    'emoji\u{1f600}',
    '-dash',
    ' space',
  ])
    fs.writeFileSync(path.join(root, name), name);
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  fs.writeFileSync(path.join(root, 'old.txt'), 'old');
  execFileSync('touch', ['-m', '-d', '@-1.5', path.join(root, 'old.txt')]);
  // A wide directory with subdirectories between its files: batches (512 entries) end inside descents.
  const wide = path.join(root, 'wide');
  fs.mkdirSync(wide);
  for (let i = 0; i < 1300; i++) {
    const p = path.join(wide, `e${String(i).padStart(4, '0')}`);
    if (i % 97 === 0) {
      fs.mkdirSync(p);
      for (let j = 0; j < 60; j++) fs.writeFileSync(path.join(p, `f${j}`), '');
      fs.symlinkSync('..', path.join(p, 'up'));
    } else fs.writeFileSync(p, String(i));
  }
  // Nested directories whose paths pass PATH_MAX (4096): past it an entry cannot be stat'd by its path, so neither walk lists it.
  const segment = 'd'.repeat(200);
  // bash, not sh: dash's cd fails once the path passes PATH_MAX, bash's goes on relative to where it is.
  execFileSync('bash', [
    '-c',
    `cd "$1" && mkdir long && cd long && for i in $(seq 24); do mkdir ${segment} && cd ${segment} && : > f; done`,
    'bash',
    root,
  ]);
});

afterAll(() => {
  if (root) execFileSync('rm', ['-rf', root]);
});

test('the build has the native walk', () => {
  expect(nativeWalkUnavailable).toBeUndefined();
  expect(fs.existsSync(path.join(REPO, 'dist', 'bundle', 'native-walk.node'))).toBe(true);
});

test.each([1, 2, 3, 30])('the same bytes as the node:fs walk at depth %i', async (depth) => {
  const viaNode = await list(root, depth, false);
  expect(viaNode.startsWith('error')).toBe(false);
  expect(await list(root, depth, true)).toBe(viaNode);
});

test('the same bytes for a root given through a symlink, with a trailing slash, and for /', async () => {
  fs.symlinkSync(path.join(root, 'wide'), path.join(root, 'wide-link'));
  try {
    for (const dir of [path.join(root, 'wide-link'), `${root}/wide/`, path.join(root, 'a')]) {
      expect(await list(dir, 2, true)).toBe(await list(dir, 2, false));
    }
  } finally {
    fs.unlinkSync(path.join(root, 'wide-link'));
  }
  // What / holds changes under a shared machine (mtimes of /tmp): compared by path.
  const paths = (listing: string) => (JSON.parse(`[${listing}]`) as Array<{ path: string }>).map((e) => e.path);
  expect(paths(await list('/', 1, true))).toEqual(paths(await list('/', 1, false)));
});

test('paths past PATH_MAX are left out by both, the ones before listed', async () => {
  const listing = await list(path.join(root, 'long'), 30, true);
  const paths = (JSON.parse(`[${listing}]`) as Array<{ path: string }>).map((e) => e.path);
  expect(Math.max(...paths.map((p) => Buffer.byteLength(p)))).toBeLessThan(4096);
  expect(paths.length).toBeGreaterThan(30);
  expect(listing).toBe(await list(path.join(root, 'long'), 30, false));
});

test('the same errors: a missing root, a file as root, the entry limit, a stop reason', async () => {
  const missing = await list(path.join(root, 'missing'), 1, false);
  expect(missing).toMatch(/^error 5: .*no such file or directory/);
  expect(await list(path.join(root, 'missing'), 1, true)).toBe(missing);
  const file = await list(path.join(root, 'file.txt'), 1, false);
  expect(file).toMatch(/^error 5: .*not a directory/);
  expect(await list(path.join(root, 'file.txt'), 1, true)).toBe(file);
  const limited = { maxEntries: 700, stopReason: () => undefined };
  const viaNode = await list(root, 3, false, limited);
  expect(viaNode).toMatch(/^error 8: .*more than 700 entries/);
  expect(await list(root, 3, true, limited)).toBe(viaNode);
  const stopped = { maxEntries: 1_000_000, stopReason: () => new AgentError(4, 'late') };
  expect(await list(path.join(root, 'wide'), 2, true, stopped)).toMatch(/^error 4: .*late$/);
});

test('many walks, finished and abandoned, do not leak', async () => {
  const limited = { maxEntries: 600, stopReason: () => undefined };
  const rss = () => process.memoryUsage().rss;
  for (let i = 0; i < 10; i++) await list(root, 3, true, i % 2 ? limited : noLimits);
  const before = rss();
  for (let i = 0; i < 60; i++) await list(root, 3, true, i % 2 ? limited : noLimits);
  expect(rss() - before).toBeLessThan(64 * 1024 * 1024);
});

test("a walk's batch buffers come from the answer's budget and all go back, when it ends and when it stops early", async () => {
  const budget = new ResponseBudget(64 * POOL_BUFFER_BYTES);
  const pool = new BufferPool(64);
  const settle = () => new Promise((r) => setTimeout(r, 50));
  const whole = new JsonChunks(budget, pool);
  await walk(Buffer.from(root), 3, ctx, noLimits, whole);
  whole.dispose();
  await settle();
  expect(budget.inUse).toBe(0);
  const afterWhole = pool.freeCount;
  expect(afterWhole).toBeGreaterThan(2);
  for (const limits of [
    { maxEntries: 700, stopReason: () => undefined },
    { maxEntries: 1_000_000, stopReason: () => new AgentError(4, 'late') },
  ]) {
    const out = new JsonChunks(budget, pool);
    await expect(walk(Buffer.from(root), 3, ctx, limits, out)).rejects.toBeInstanceOf(AgentError);
    out.dispose();
    // A batch the pool thread was still writing goes back when it ends.
    await settle();
    expect(budget.inUse).toBe(0);
  }
  // Reused, not made anew: the pool holds no more than the first walk needed.
  expect(pool.freeCount).toBe(afterWhole);
  // A budget too small for the walk's batches: resource_exhausted, and nothing held after.
  const tight = new ResponseBudget(POOL_BUFFER_BYTES);
  const out = new JsonChunks(tight, pool);
  await expect(walk(Buffer.from(root), 3, ctx, noLimits, out)).rejects.toMatchObject({ code: 8 });
  out.dispose();
  await settle();
  expect(tight.inUse).toBe(0);
});

test('the addon refuses a batch buffer too short for one record of the longest path, or not word-aligned', () => {
  const addon = {
    exports: {} as {
      open(r: string, d: number, b: number): object;
      next(w: object, into: Buffer): Promise<number>;
      close(w: object): void;
    },
  };
  process.dlopen(addon, path.join(DIST, 'filesystem', 'native-walk.node'));
  const w = addon.exports.open(root, 1, 512);
  try {
    expect(() => addon.exports.next(w, Buffer.allocUnsafeSlow(4096))).toThrow(/at least MIN_INTO_BYTES/);
    expect(() => addon.exports.next(w, Buffer.allocUnsafeSlow(POOL_BUFFER_BYTES + 1).subarray(1))).toThrow(/word-aligned/);
  } finally {
    addon.exports.close(w);
  }
});
