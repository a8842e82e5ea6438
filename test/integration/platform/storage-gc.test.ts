/**
 * Storage collection on the real platform (runtime, Redis, gateway), driven by the unmodified E2B SDK and CLI: two
 * templates share layers and an upload; one is deleted (`e2b template delete`); a collection (`POST /admin/gc`, then
 * `sandbox-kit gc`) removes only what that template alone had, and only once its sandbox and the snapshot taken of
 * it are gone, while both keep working until then and the other template still creates sandboxes. Templates from a
 * lab registry's images: the layers of an image no template uses go, a layer another image shares stays. The
 * collections' reports give the bytes freed. Root only; the platform's own standalone network.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RunningGateway } from '../../../src/gateway';
import { OciLayoutImages } from '../../../src/lab/oci-images';
import { type LabRegistry, startLabRegistry } from '../../../src/lab/registry';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import type { GcReport } from '../../../src/platform/storage';
import { TemplateStore } from '../../../src/platform/templates/store';
import { DEFAULT_TEAM_ID } from '../../../src/platform/teams/model';
import type { AgentPayload } from '../../../src/runtime/agent-payload';
import { allocatedBytes } from '../../../src/util/disk-usage';
import { CLI, ROOT } from '../../helpers/cli';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { adminCall, startPlatformAndGateway } from './helpers/platform-and-gateway';
import { SdkDriver } from './helpers/sdk-driver';

jest.setTimeout(600_000);

const run = promisify(execFile);

let stateDir: string;
let agent: AgentPayload;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
let store: TemplateStore;
let registry: LabRegistry;

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skgc-'));
  agent = await freshAgentPayload(join(stateDir, 'bundle'));
  // Collected only when asked, and nothing kept for its age: what a run removes is decided by references alone.
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, {
    platform: { gc: { intervalSeconds: 0, keepUnusedSeconds: 0 } },
  }));
  store = new TemplateStore(platform.redis);
  sdk = await SdkDriver.start();
  registry = await startLabRegistry({ dir: join(stateDir, 'registry') });
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await registry?.stop();
  for (const record of (await platform?.sandboxes.all()) ?? []) await platform.sandboxes.kill(record.sandboxID).catch(() => {});
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const gc = async (): Promise<GcReport> => (await adminCall(opts, 'POST', '/admin/gc', {})) as unknown as GcReport;
const sh = async (sandboxID: string, cmd: string): Promise<string> =>
  (await sdk.call<{ stdout: string }>(sandboxID, 'commands.run', cmd)).stdout;

/** The layers and the uploads' files of a template's ready build, read from the platform's own records. */
async function stored(name: string): Promise<{ layers: string[]; uploads: string[] }> {
  const id = await store.templateIDByName(DEFAULT_TEAM_ID, name);
  const build = await store.getBuild((await store.getTemplate(id!))!.readyBuildID!);
  const hashes = new Set((build!.steps ?? []).flatMap((s) => (s.filesHash ? [s.filesHash] : [])));
  const uploads = (await store.allFiles()).filter((f) => hashes.has(f.hash)).map((f) => f.file.path);
  return { layers: build!.layers, uploads };
}

const exists = (paths: string[]) => paths.map((p) => fs.existsSync(p));

/** The unmodified E2B CLI, as an operator deletes a template. */
async function e2bTemplateDelete(templateID: string): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), 'skgc-cli-'));
  try {
    await run(process.execPath, [join(ROOT, 'node_modules/@e2b/cli/dist/index.js'), 'template', 'delete', templateID, '--yes'], {
      env: { PATH: process.env.PATH, HOME: home, E2B_API_KEY: opts.apiKey, E2B_API_URL: opts.apiUrl, NO_COLOR: '1' },
      timeout: 60_000,
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

test("a deleted template's own layers and uploads go once its sandbox and snapshot are gone; what it shared stays, and both templates' sandboxes work throughout", async () => {
  const context = join(stateDir, 'context');
  fs.mkdirSync(context);
  fs.writeFileSync(join(context, 'shared.txt'), 'in both\n');
  fs.writeFileSync(join(context, 'a.txt'), `only in a ${'a'.repeat(300_000)}\n`);
  fs.writeFileSync(join(context, 'b.txt'), 'only in b\n');
  const shared = [{ run: 'echo shared > /home/user/shared-run' }, { copy: { src: 'shared.txt', dest: '/home/user/' } }];
  const debian = { image: 'debian:bookworm' };
  const sdkOpts = { apiKey: opts.apiKey, apiUrl: opts.apiUrl };
  await sdk.buildSteps(
    'gc-a',
    debian,
    [...shared, { run: 'head -c 2000000 /dev/urandom > /home/user/own-a' }, { copy: { src: 'a.txt', dest: '/home/user/' } }],
    sdkOpts,
    context,
  );
  await sdk.buildSteps(
    'gc-b',
    debian,
    [...shared, { run: 'echo b > /home/user/own-b' }, { copy: { src: 'b.txt', dest: '/home/user/' } }],
    sdkOpts,
    context,
  );
  const a = await stored('gc-a');
  const b = await stored('gc-b');
  const aOwn = a.layers.filter((l) => !b.layers.includes(l));
  const both = a.layers.filter((l) => b.layers.includes(l) && l.startsWith(stateDir));
  expect(aOwn).toHaveLength(2);
  expect(both).toHaveLength(3); // the provision layer, the RUN and the COPY both have
  const aUpload = a.uploads.filter((u) => !b.uploads.includes(u));
  expect(aUpload).toHaveLength(1);
  expect(a.uploads.filter((u) => b.uploads.includes(u))).toHaveLength(1);

  // A sandbox of a, and a snapshot of another one (that sandbox then killed).
  const sa = await sdk.create('gc-a', opts);
  const source = await sdk.create('gc-a', opts);
  await sdk.call(source.sandboxId, 'files.write', '/home/user/note', 'in the snapshot');
  const snap = await sdk.call<{ snapshotId: string }>(source.sandboxId, 'createSnapshot', {});
  await sdk.call(source.sandboxId, 'kill');

  await e2bTemplateDelete((await store.templateIDByName(DEFAULT_TEAM_ID, 'gc-a'))!);
  await expect(sdk.create('gc-a', opts)).rejects.toMatchObject({ message: expect.stringContaining('not found') });

  // Its sandbox and snapshot still use its layers: only its upload goes (no sandbox needs an upload).
  const first = await gc();
  expect(first.removed).toMatchObject({ layers: 0, uploads: 1 });
  expect(first.bytesFreedBy.uploads).toBeGreaterThan(0);
  expect(exists([...aOwn, ...both, ...b.layers.filter((l) => l.startsWith(stateDir))]).every(Boolean)).toBe(true);
  expect(exists(aUpload)).toEqual([false]);
  expect(exists(b.uploads).every(Boolean)).toBe(true);
  expect(
    await sh(sa.sandboxId, 'cat /home/user/shared-run /home/user/b.txt 2>&1; wc -c < /home/user/own-a; head -c 9 /home/user/a.txt'),
  ).toBe('shared\ncat: /home/user/b.txt: No such file or directory\n2000000\nonly in a');
  const fromSnap = await sdk.create(snap.snapshotId, opts);
  expect(await sdk.call(fromSnap.sandboxId, 'files.read', '/home/user/note')).toBe('in the snapshot');
  expect(await sh(fromSnap.sandboxId, 'wc -c < /home/user/own-a')).toBe('2000000\n');

  // Once they are gone, a's own layers go too; what b has stays, and b still creates sandboxes.
  for (const id of [sa.sandboxId, fromSnap.sandboxId]) await sdk.call(id, 'kill');
  expect(await sdk.static('deleteSnapshot', snap.snapshotId, opts)).toBe(true);
  const ownBytes = (await Promise.all(aOwn.map((l) => allocatedBytes(l)))).reduce((x, y) => x + y, 0);
  const cli = await run(process.execPath, [CLI, 'gc', '--api-url', opts.apiUrl, '--api-key-file', platform.apiKeyFile, '--json'], {
    timeout: 120_000,
  });
  const second = JSON.parse(cli.stdout) as GcReport;
  process.stderr.write(`storage-gc: second collection: ${JSON.stringify(second)}\n`);
  expect(second.removed).toMatchObject({ layers: 2, uploads: 0 });
  expect(second.bytesFreedBy.layers).toBe(ownBytes);
  expect(second.bytesFreed).toBeGreaterThanOrEqual(2_000_000);
  expect(exists(aOwn)).toEqual([false, false]);
  expect(exists([...b.layers.filter((l) => l.startsWith(stateDir)), ...b.uploads]).every(Boolean)).toBe(true);
  const sb = await sdk.create('gc-b', opts);
  expect(await sh(sb.sandboxId, 'cat /home/user/shared-run /home/user/shared.txt /home/user/own-b /home/user/b.txt')).toBe(
    'shared\nin both\nb\nonly in b\n',
  );
  await sdk.call(sb.sandboxId, 'kill');

  // Nothing is referenced only by what was removed: another run removes nothing.
  expect((await gc()).removed).toMatchObject({ layers: 0, uploads: 0, imageLayers: 0 });
});

test("a pulled image's layers go when no template uses them; a layer another template's image shares stays", async () => {
  const work = join(stateDir, 'images-work');
  const images = new OciLayoutImages(join(work, 'layout'));
  await images.init('empty');
  for (const [name, bytes] of [
    ['base', 400_000],
    ['one', 300_000],
    ['two', 200_000],
  ] as const) {
    const dir = join(work, name);
    fs.mkdirSync(join(dir, 'data'), { recursive: true });
    fs.writeFileSync(join(dir, 'data', name), Buffer.alloc(bytes, name.charCodeAt(0)));
  }
  await images.insert('empty', join(work, 'base'), '/', 'base');
  await images.insert('base', join(work, 'one'), '/', 'one');
  await images.insert('base', join(work, 'two'), '/', 'two');
  for (const tag of ['one', 'two']) await images.push(tag, `${registry.host}/gc/img:${tag}`);
  const sdkOpts = { apiKey: opts.apiKey, apiUrl: opts.apiUrl };
  await sdk.buildSteps('gc-img-one', { image: `${registry.host}/gc/img:one` }, [], sdkOpts);
  await sdk.buildSteps('gc-img-two', { image: `${registry.host}/gc/img:two` }, [], sdkOpts);
  const one = (await stored('gc-img-one')).layers;
  const two = (await stored('gc-img-two')).layers;
  expect(one).toHaveLength(2);
  expect(one[1]).toBe(two[1]); // the base layer, stored once
  const imageRecords = () => fs.readdirSync(join(stateDir, 'templates', 'images', 'images'));
  expect(imageRecords()).toHaveLength(2);

  await e2bTemplateDelete((await store.templateIDByName(DEFAULT_TEAM_ID, 'gc-img-one'))!);
  const oneBytes = await allocatedBytes(one[0]!);
  const first = await gc();
  expect(first.removed).toMatchObject({ imageLayers: 1, images: 1 });
  expect(first.removed.blobs).toBeGreaterThanOrEqual(2); // its layer's and its config's blobs (and the manifests)
  expect(first.bytesFreedBy.images).toBeGreaterThanOrEqual(oneBytes);
  expect(exists([one[0]!, ...two])).toEqual([false, true, true]);
  expect(imageRecords()).toHaveLength(1);

  await e2bTemplateDelete((await store.templateIDByName(DEFAULT_TEAM_ID, 'gc-img-two'))!);
  const second = await gc();
  expect(second.removed).toMatchObject({ imageLayers: 2, images: 1 });
  expect(exists(two)).toEqual([false, false]);
  expect(fs.readdirSync(join(stateDir, 'templates', 'images', 'blobs', 'sha256'))).toEqual([]);
  process.stderr.write(`storage-gc: image collections freed ${first.bytesFreed} and ${second.bytesFreed} bytes\n`);
});
