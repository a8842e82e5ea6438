/**
 * The storage collector over a real Redis and a real data directory (no runtime: the records are written as the
 * builder and the platform write them): what is referenced stays, what is not goes once old enough, with its
 * shifted copies, cache entries and upload records; a hold taken before or released during a run keeps its paths;
 * the image store's records and blobs follow its layers; a pull under way keeps the whole image store; the bytes
 * freed are what the removed files took. The MCP servers' image store and the relocated (hard-linked) copies of
 * images in both stores: a copy in use stays with the layers it was made from, an unused one goes with them, a
 * file still linked elsewhere is not counted as freed. A deleted template's build records and logs go.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import Redis from 'ioredis';
import { StorageCollector, type CollectorOptions } from '../../../src/platform/storage';
import { TemplateStore, type BuildRecord } from '../../../src/platform/templates/store';
import type { TemplateDirs } from '../../../src/platform/templates/service';
import { allocatedBytes } from '../../../src/util/disk-usage';
import { exec } from '../../../src/util/exec';
import { PathHolds } from '../../../src/util/path-holds';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';

jest.setTimeout(60_000);

let server: ThrowawayRedis;
let redis: Redis;
let root: string;
let dirs: TemplateDirs;
/** The MCP servers' image store (a create's pulls), beside the builder's. */
let mcpStore: string;
let store: TemplateStore;
let holds: PathHolds;
let sandboxes: Array<{ buildID?: string; layers?: string[] }>;
let snapshots: Array<{ layerDir: string; template: { layers: string[] } }>;

const DAY = 86_400;
const later = (seconds: number) => () => Date.now() + seconds * 1000;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

beforeEach(async () => {
  await redis.flushall();
  root = await mkdtemp(join(tmpdir(), 'sk-gc-'));
  dirs = { layers: join(root, 'layers'), files: join(root, 'files'), images: join(root, 'images'), scratch: join(root, 'scratch') };
  mcpStore = join(root, 'mcp-images');
  for (const d of [...Object.values(dirs), mcpStore]) fs.mkdirSync(d, { recursive: true });
  store = new TemplateStore(redis, `sk:gctest:`);
  holds = new PathHolds();
  sandboxes = [];
  snapshots = [];
});
afterEach(() => rm(root, { recursive: true, force: true }));

function collector(o: Partial<CollectorOptions> = {}): StorageCollector {
  return new StorageCollector({
    templates: { store, dirs, deadlineSeconds: 3600 },
    sandboxes: async () => sandboxes,
    snapshots: async () => snapshots as never,
    holds,
    keepUnusedSeconds: DAY,
    mcpImages: mcpStore,
    ...o,
  });
}

/** A layer directory holding `bytes` of data, and its cache entry. */
async function layer(name: string, bytes = 64 * 1024): Promise<string> {
  const dir = join(dirs.layers, name);
  fs.mkdirSync(join(dir, 'etc'), { recursive: true });
  fs.writeFileSync(join(dir, 'etc', 'data'), Buffer.alloc(bytes, 7));
  await store.putLayer(`key-${name}`, { dir, createdAt: new Date().toISOString() });
  return dir;
}

async function upload(teamID: string, hash: string, bytes = 32 * 1024): Promise<string> {
  const dir = join(dirs.files, teamID);
  fs.mkdirSync(dir, { recursive: true });
  const path = join(dir, `${hash}.tar`);
  fs.writeFileSync(path, Buffer.alloc(bytes, 1));
  await store.putFile(teamID, hash, { path, bytes, sha256: 'x'.repeat(64), checkable: true });
  return path;
}

/** A template whose default tag points at a ready build of `layers`, copying the uploads `copies`. */
async function template(templateID: string, buildID: string, layers: string[], copies: string[] = []): Promise<void> {
  const now = new Date().toISOString();
  await store.putTemplate({
    templateID,
    teamID: 'team1',
    names: [templateID],
    cpuCount: 1,
    memoryMB: 512,
    createdAt: now,
    updatedAt: now,
    buildCount: 1,
    readyBuildID: buildID,
  });
  const build: BuildRecord = {
    buildID,
    templateID,
    teamID: 'team1',
    status: 'ready',
    createdAt: now,
    updatedAt: now,
    cpuCount: 1,
    memoryMB: 512,
    tags: ['default'],
    layers,
    envs: {},
    user: 'user',
    steps: copies.map((filesHash) => ({ type: 'COPY', args: ['a', '/a'], force: false, filesHash })),
  };
  await store.putBuild(build);
  await store.setTags(templateID, ['default'], buildID, now);
}

test('referenced layers and uploads stay; the rest goes once old enough, with its shifted copy, cache entry and upload record; bytes freed are reported', async () => {
  const base = '/var/cache/sandbox-kit/not-ours';
  const shared = await layer('shared');
  const kept = await layer('kept');
  const gone = await layer('gone', 256 * 1024);
  const bySandbox = await layer('by-sandbox');
  const bySnapshot = await layer('by-snapshot');
  fs.mkdirSync(`${gone}.ids-100000-65536-0123456789ab`);
  fs.writeFileSync(`${gone}.ids-100000-65536-0123456789ab.lock`, '');
  fs.mkdirSync(`${kept}.ids-100000-65536-0123456789ab`);
  await template('tkept', 'bkept', [kept, shared, base], ['hkept']);
  const keptUpload = await upload('team1', 'hkept');
  const goneUpload = await upload('team1', 'hgone');
  const otherTeams = await upload('team2', 'hkept');
  sandboxes = [{ layers: [bySandbox, base] }];
  snapshots = [{ layerDir: join(root, 'snap'), template: { layers: [join(root, 'snap'), bySnapshot] } }];
  const goneBytes = (await allocatedBytes(gone)) + (await allocatedBytes(`${gone}.ids-100000-65536-0123456789ab`));
  const uploadBytes = (await allocatedBytes(goneUpload)) + (await allocatedBytes(otherTeams));

  // Fresh: nothing unused is old enough yet.
  const fresh = await collector().collect();
  expect(fresh.removed).toMatchObject({ layers: 0, uploads: 0 });
  expect(fs.existsSync(gone)).toBe(true);

  const report = await collector({ now: later(DAY + 60) }).collect();
  expect(report.removed).toMatchObject({ layers: 1, shiftedCopies: 2, uploads: 2 });
  for (const p of [shared, kept, bySandbox, bySnapshot, `${kept}.ids-100000-65536-0123456789ab`, keptUpload])
    expect(fs.existsSync(p)).toBe(true);
  for (const p of [gone, `${gone}.ids-100000-65536-0123456789ab`, goneUpload, otherTeams]) expect(fs.existsSync(p)).toBe(false);
  expect(await store.getLayer('key-gone')).toBeUndefined();
  expect(await store.getLayer('key-kept')).toBeDefined();
  expect(await store.getFile('team1', 'hgone')).toBeUndefined();
  expect(await store.getFile('team2', 'hkept')).toBeUndefined();
  expect(await store.getFile('team1', 'hkept')).toBeDefined();
  expect(report.bytesFreedBy.layers).toBe(goneBytes);
  expect(report.bytesFreedBy.uploads).toBe(uploadBytes);
  expect(report.bytesFreed).toBe(goneBytes + uploadBytes);
  expect(fs.readdirSync(root).sort()).toEqual(['files', 'images', 'layers', 'mcp-images', 'scratch']);
});

test("a deleted template's layers go, those it shared with another template stay", async () => {
  const shared = await layer('shared');
  const own = await layer('own');
  const other = await layer('other');
  await template('ta', 'ba', [own, shared]);
  await template('tb', 'bb', [other, shared]);
  await store.deleteTemplate((await store.getTemplate('ta'))!);
  const report = await collector({ now: later(DAY + 60) }).collect();
  expect(report.removed.layers).toBe(1);
  expect(fs.existsSync(own)).toBe(false);
  expect(fs.existsSync(shared) && fs.existsSync(other)).toBe(true);
});

test('a hold keeps its paths: one taken before the run, and one released while the run reads the records', async () => {
  const heldBefore = await layer('held-before');
  const releasedDuring = await layer('released-during');
  const free = await layer('free');
  const before = await holds.claim([heldBefore]);
  const during = await holds.claim([releasedDuring]);
  const c = collector({
    now: later(DAY + 60),
    // The records are read after the run started tracking: a build finishing now releases its hold here.
    sandboxes: async () => {
      during?.();
      return [];
    },
  });
  const report = await c.collect();
  expect(fs.existsSync(heldBefore) && fs.existsSync(releasedDuring)).toBe(true);
  expect(fs.existsSync(free)).toBe(false);
  expect(report.removed.layers).toBe(1);
  before?.();
  // Released and unreferenced now: the next run takes them.
  expect((await collector({ now: later(DAY + 60) }).collect()).removed.layers).toBe(2);
});

test('a claim after the collector moved a layer fails, so the claimer looks again', async () => {
  const l = await layer('l');
  await collector({ now: later(DAY + 60) }).collect();
  expect(await holds.claim([l])).toBeUndefined();
});

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** An image in the store as pull.ts leaves it: blobs, its record (named by the image's digest), its unpacked layers. */
function image(name: string, layerIds: string[], store = dirs.images): { layers: string[]; blobs: string[]; record: string } {
  const config = JSON.stringify({ rootfs: { type: 'layers', diff_ids: layerIds.map((l) => `sha256:${sha(l)}`) } });
  const blobs = [sha(config), ...layerIds.map((l) => sha(`blob-${l}`)), sha(`manifest-${name}`)];
  fs.mkdirSync(join(store, 'blobs', 'sha256'), { recursive: true });
  for (const b of blobs) fs.writeFileSync(join(store, 'blobs', 'sha256', b), b);
  const layers = layerIds.map((l) => join(store, 'layers', '100000-65536', `sha256-${sha(l)}`));
  for (const l of layers) {
    fs.mkdirSync(join(l, 'usr'), { recursive: true });
    fs.writeFileSync(join(l, 'usr', 'f'), Buffer.alloc(8192, 3));
  }
  const record = join(store, 'images', `sha256-${sha(name)}-linux-amd64.json`);
  fs.mkdirSync(join(store, 'images'), { recursive: true });
  fs.writeFileSync(
    record,
    JSON.stringify({ config, layers: layerIds.map((l) => ({ digest: `sha256:${sha(`blob-${l}`)}`, mediaType: 'x', size: 1 })) }),
  );
  return { layers, blobs: blobs.map((b) => join(store, 'blobs', 'sha256', b)), record };
}

test('pulled images: a layer no template uses goes, with the records naming it and the blobs only they named; a shared layer stays', async () => {
  const one = image('one', ['base', 'one']);
  const two = image('two', ['base', 'two']);
  await template('tb', 'bb', two.layers);
  const report = await collector({ now: later(DAY + 60) }).collect();
  expect(fs.existsSync(one.layers[1]!)).toBe(false);
  expect(fs.existsSync(one.record)).toBe(false);
  expect(two.layers.every((l) => fs.existsSync(l)) && fs.existsSync(two.record)).toBe(true);
  // one's config and own layer blob and both manifests go (a manifest is read only while pulling); two's stay.
  expect(one.blobs.map((b) => fs.existsSync(b))).toEqual([false, true, false, false]);
  expect(two.blobs.map((b) => fs.existsSync(b))).toEqual([true, true, true, false]);
  expect(report.removed).toMatchObject({ imageLayers: 1, images: 1, blobs: 4 });
  expect(report.bytesFreedBy.images).toBeGreaterThan(8192);
});

test('a pull under way holds the whole image store: nothing of it goes in that run', async () => {
  const one = image('one', ['base', 'one']);
  const pull = await holds.claim([dirs.images]);
  const report = await collector({ now: later(DAY + 60) }).collect();
  expect(report.skipped).toEqual(['the image store: a pull was under way']);
  expect(one.layers.every((l) => fs.existsSync(l)) && fs.existsSync(one.record)).toBe(true);
  pull?.();
  expect((await collector({ now: later(DAY + 60) }).collect()).removed.imageLayers).toBe(2);
});

test("scratch and a step's work dir go only once older than a build may run", async () => {
  fs.mkdirSync(join(dirs.scratch, 'ctx-abc'));
  fs.mkdirSync(join(dirs.layers, '.x.work-step-1'));
  fs.mkdirSync(join(dirs.images, 'tmp', 'pull-1'), { recursive: true });
  expect((await collector({ now: later(3000) }).collect()).removed.scratch).toBe(0);
  expect((await collector({ now: later(3600 + 601) }).collect()).removed.scratch).toBe(3);
  expect(fs.readdirSync(dirs.scratch)).toEqual([]);
});

test('two calls while one runs get the same report', async () => {
  await layer('a');
  const c = collector({ now: later(DAY + 60) });
  const [x, y] = await Promise.all([c.collect(), c.collect()]);
  expect(x).toBe(y);
  expect(x.removed.layers).toBe(1);
});

/**
 * A relocated copy of a pulled image as sandboxes/mcp-images.ts makes it in `<store>/mcp`: `info` and one
 * `layer-<n>` per image layer holding hard links to the pulled layer's files.
 */
function relocated(store: string, name: string, layers: string[]): string[] {
  // Named by the image's digest, as its record is.
  const base = join(store, 'mcp', `mcp-${name}-sha256-${sha(name)}`);
  fs.mkdirSync(join(base, 'info', 'opt'), { recursive: true });
  fs.writeFileSync(join(base, 'info', 'opt', 'image.json'), '{}');
  const copies = [join(base, 'info')];
  layers.forEach((l, i) => {
    const copy = join(base, `layer-${i}`, 'rootfs');
    fs.mkdirSync(copy, { recursive: true });
    execFileSync('cp', ['-a', '-l', `${l}/.`, copy]);
    copies.push(join(base, `layer-${i}`));
  });
  return copies;
}

/** The blocks of the directories in a tree (its files not counted), in bytes. */
function dirBlocks(tree: string): number {
  let bytes = fs.lstatSync(tree).blocks * 512;
  for (const name of fs.readdirSync(tree)) if (fs.lstatSync(join(tree, name)).isDirectory()) bytes += dirBlocks(join(tree, name));
  return bytes;
}

/** `du` of several trees together: a file linked from two of them counts once. */
async function duTogether(paths: string[]): Promise<number> {
  const r = await exec(['du', '-s', '-c', '-B1', ...paths]);
  return Number(/^(\d+)\s+total$/m.exec(r.stdout)?.[1]);
}

test("the MCP servers' store: a copy a sandbox uses stays with its pulled layers; an unused one goes with them, freeing their bytes once", async () => {
  const used = image('used', ['u0', 'u1'], mcpStore);
  const unused = image('unused', ['n0'], mcpStore);
  const usedCopies = relocated(mcpStore, 'used', used.layers);
  const unusedCopies = relocated(mcpStore, 'unused', unused.layers);
  sandboxes = [{ layers: [...usedCopies, '/var/cache/sandbox-kit/not-ours'] }];
  // What goes (the copies' own directory is removed, not measured), the used image's manifest blob among it.
  const removedBefore = await duTogether([...unusedCopies, ...unused.layers, unused.record, ...unused.blobs, used.blobs[3]!]);

  const report = await collector({ now: later(DAY + 60) }).collect();
  // In use: the copies, the layers they were made from (no record names those), its record and blobs.
  for (const p of [...usedCopies, ...used.layers, used.record, ...used.blobs.slice(0, 3)]) expect(fs.existsSync(p)).toBe(true);
  // Unused: its copies (and their directory), its layers, record, config and layer blobs; both manifests (never kept).
  for (const p of [dirname(unusedCopies[0]!), ...unused.layers, unused.record, ...unused.blobs]) expect(fs.existsSync(p)).toBe(false);
  expect(report.removed).toMatchObject({ imageCopies: 2, imageLayers: 1, images: 1, blobs: 4 });
  expect(report.kept).toMatchObject({ imageCopies: 3, imageLayers: 2 });
  // Linked twice (copy and layer), both gone: counted once. The used image's manifest blob is the rest.
  expect(report.bytesFreedBy.images).toBe(removedBefore);
});

test('a copy whose pulled layer a build still names goes without counting the bytes it shares; a pull under way keeps the store whole', async () => {
  const pulled = image('base', ['b0']);
  const copies = relocated(dirs.images, 'base', pulled.layers);
  await template('tb', 'bb', pulled.layers); // a template made fromImage names the pulled layer itself
  // Freed: the info copy whole, the layer copy's directories only (its file is the kept layer's too), the manifest.
  const freed = (await duTogether([copies[0]!, pulled.blobs[2]!])) + dirBlocks(copies[1]!);

  const hold = holds.hold([mcpStore]);
  const report = await collector({ now: later(DAY + 60) }).collect();
  hold();
  expect(report.skipped).toEqual(["the MCP servers' image store: a pull was under way"]);
  expect(copies.every((c) => !fs.existsSync(c))).toBe(true);
  expect(fs.existsSync(pulled.layers[0]!)).toBe(true);
  expect(report.removed.imageCopies).toBe(2);
  expect(report.bytesFreedBy.images).toBe(freed);
});

test("a deleted template's build records and logs go once old; those a sandbox or snapshot names, a running one and a live template's stay", async () => {
  await template('tlive', 'blive', []);
  await template('tgone', 'bgone', []);
  const old = new Date(Date.now() - 2 * DAY * 1000).toISOString();
  for (const buildID of ['bold', 'bsandbox', 'bsnapshot', 'brunning'])
    await store.putBuild({ ...(await store.getBuild('bgone'))!, buildID, updatedAt: old });
  for (const buildID of ['bold', 'blive', 'bgone'])
    await store.appendLog(buildID, { timestamp: old, level: 'info', message: 'x' } as never);
  await store.claimRunning('tgone', 'brunning');
  await store.deleteTemplate((await store.getTemplate('tgone'))!);
  sandboxes = [{ buildID: 'bsandbox', layers: [] }];
  snapshots = [{ layerDir: join(root, 'snap'), template: { layers: [], buildID: 'bsnapshot' } as never }];

  const fresh = await collector().collect();
  expect(fresh.removed.builds).toBe(1); // bold: older than a day already; bgone changed just now
  const report = await collector({ now: later(DAY + 60) }).collect();
  expect(report.removed.builds).toBe(1); // bgone
  expect(await store.getBuild('bold')).toBeUndefined();
  expect(await store.getBuild('bgone')).toBeUndefined();
  expect(await redis.exists('sk:gctest:build:bold:logs', 'sk:gctest:build:bgone:logs')).toBe(0);
  for (const id of ['bsandbox', 'bsnapshot', 'brunning', 'blive']) expect(await store.getBuild(id)).toBeDefined();
  expect(await redis.llen('sk:gctest:build:blive:logs')).toBe(1);
  expect((await store.buildsOf('tgone')).sort()).toEqual(['brunning', 'bsandbox', 'bsnapshot']);
});
