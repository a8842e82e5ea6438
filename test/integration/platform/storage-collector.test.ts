/**
 * The storage collector over a real Redis and a real data directory (no runtime: the records are written as the
 * builder and the platform write them): what is referenced stays, what is not goes once old enough, with its
 * shifted copies, cache entries and upload records; a hold taken before or released during a run keeps its paths;
 * the image store's records and blobs follow its layers; a pull under way keeps the whole image store; the bytes
 * freed are what the removed files took.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { StorageCollector, type CollectorOptions } from '../../../src/platform/storage';
import { TemplateStore, type BuildRecord } from '../../../src/platform/templates/store';
import type { TemplateDirs } from '../../../src/platform/templates/service';
import { allocatedBytes } from '../../../src/util/disk-usage';
import { PathHolds } from '../../../src/util/path-holds';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';

jest.setTimeout(60_000);

let server: ThrowawayRedis;
let redis: Redis;
let root: string;
let dirs: TemplateDirs;
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
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
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
  expect(fs.readdirSync(root).sort()).toEqual(['files', 'images', 'layers', 'scratch']);
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

/** An image in the store as pull.ts leaves it: blobs, its record, its unpacked layers. */
function image(name: string, layerIds: string[]): { layers: string[]; blobs: string[]; record: string } {
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  const config = JSON.stringify({ rootfs: { type: 'layers', diff_ids: layerIds.map((l) => `sha256:${sha(l)}`) } });
  const blobs = [sha(config), ...layerIds.map((l) => sha(`blob-${l}`)), sha(`manifest-${name}`)];
  fs.mkdirSync(join(dirs.images, 'blobs', 'sha256'), { recursive: true });
  for (const b of blobs) fs.writeFileSync(join(dirs.images, 'blobs', 'sha256', b), b);
  const layers = layerIds.map((l) => join(dirs.images, 'layers', '100000-65536', `sha256-${sha(l)}`));
  for (const l of layers) {
    fs.mkdirSync(join(l, 'usr'), { recursive: true });
    fs.writeFileSync(join(l, 'usr', 'f'), Buffer.alloc(8192, 3));
  }
  const record = join(dirs.images, 'images', `sha256-${sha(name)}-linux-amd64.json`);
  fs.mkdirSync(join(dirs.images, 'images'), { recursive: true });
  fs.writeFileSync(
    record,
    JSON.stringify({ config, layers: layerIds.map((l) => ({ digest: `sha256:${sha(`blob-${l}`)}`, mediaType: 'x', size: 1 })) }),
  );
  return { layers, blobs: blobs.map((b) => join(dirs.images, 'blobs', 'sha256', b)), record };
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
