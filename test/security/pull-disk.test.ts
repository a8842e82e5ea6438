/**
 * Image pulls go through the data root's disk admission (runtime/images/pull.ts, `disk`; admission.ts,
 * DiskAdmission.guard), pulled from the lab's registry on loopback into an image store on a small file system of the
 * test's own (a loop-mounted image: its size is the data root's). An image whose blobs do not fit the room left is
 * refused before a blob is fetched; one whose blobs fit but whose layer unpacks past the room (zeros compress to
 * nothing) is ended as it unpacks. Both are refused naming limits.diskOvercommit, with nothing left: no blob, no
 * layer, no scratch, no hold. The same images pull once there is room, and a small one pulls beside the filler.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OciLayoutImages } from '../../src/lab/oci-images';
import { type LabRegistry, startLabRegistry } from '../../src/lab/registry';
import { DiskAdmission } from '../../src/runtime/admission';
import { ImagePullError, pullImage } from '../../src/runtime/images';
import { makeLoopVolume, type LoopVolume } from './helpers/loop-volume';

jest.setTimeout(300_000);

const MIB = 1024 * 1024;
/** The data root: small, so filling it is quick. */
const ROOT_MB = 768;
/** The data root may be committed to half its size: the file system itself never fills before the admission acts. */
const OVERCOMMIT = 0.5;

let scratch: string;
let volume: LoopVolume | undefined;
let registry: LabRegistry | undefined;
let admission: DiskAdmission;
let store: string;

/** A file of `mb` MiB of zeros (or random bytes) under `dir`/`name`. */
function fileOf(dir: string, name: string, mb: number, random = false): void {
  fs.mkdirSync(dir, { recursive: true });
  const fd = fs.openSync(join(dir, name), 'w');
  const zeros = Buffer.alloc(MIB);
  for (let i = 0; i < mb; i++) fs.writeSync(fd, random ? randomBytes(MIB) : zeros);
  fs.closeSync(fd);
}

/** What the store holds: blobs, unpacked layers (not their files), image records, scratch; paths relative to it. */
function stored(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const p = join(store, rel);
    if (!fs.existsSync(p)) return;
    if (fs.statSync(p).isDirectory() && (rel.split('/').length < 3 || rel.startsWith('tmp')))
      for (const f of fs.readdirSync(p)) walk(`${rel}/${f}`);
    else out.push(rel);
  };
  for (const sub of ['blobs', 'layers', 'images', 'tmp']) walk(sub);
  return out.sort();
}

const pull = (tag: string) =>
  pullImage(`${registry!.host}/lab/disk:${tag}`, { storeDir: store, disk: admission, onLine: (l) => process.stderr.write(`${l}\n`) });

beforeAll(async () => {
  scratch = fs.mkdtempSync(join(tmpdir(), 'sk-pull-disk-'));
  volume = makeLoopVolume(scratch, ROOT_MB);
  store = join(volume.mountPoint, 'images');
  admission = new DiskAdmission({ root: volume.mountPoint, imageDirs: [], overcommit: OVERCOMMIT });
  registry = await startLabRegistry({ dir: join(scratch, 'registry') });
  const images = new OciLayoutImages(join(scratch, 'layout'));
  await images.init('empty');
  // zeros: 300 MiB that compress to well under 1 MB; random: 120 MiB that do not compress; small: 8 MiB of zeros.
  const trees = join(scratch, 'trees');
  fileOf(join(trees, 'zeros'), 'zeros', 300);
  fileOf(join(trees, 'random'), 'random', 120, true);
  fileOf(join(trees, 'small'), 'small', 8);
  for (const tag of ['zeros', 'random', 'small']) {
    await images.insert('empty', join(trees, tag), `/${tag}`, tag);
    await images.push(tag, `${registry.host}/lab/disk:${tag}`);
  }
}, 300_000);

afterAll(async () => {
  await registry?.stop();
  volume?.remove();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** Fills the data root until `roomMB` is left as the admission counts it; the returned function frees it. */
function leaveRoom(roomMB: number): () => void {
  const filler = join(volume!.mountPoint, 'filler');
  const fill = admission.roomMB() - roomMB;
  if (fill > 0) fileOf(volume!.mountPoint, 'filler', fill);
  return () => fs.rmSync(filler, { force: true });
}

test('a pull whose blobs or unpacked layers pass the room is refused naming limits.diskOvercommit, nothing left; with room the same pulls work', async () => {
  const free = leaveRoom(100);
  try {
    const roomBefore = admission.roomMB();
    expect(roomBefore).toBeGreaterThan(50);
    expect(roomBefore).toBeLessThanOrEqual(100);

    // 120 MiB of blobs into 100 MB: refused from the sizes the registry lists, before any is fetched.
    const blobs = await pull('random').then(
      () => undefined,
      (err: Error) => err,
    );
    expect(blobs).toBeInstanceOf(ImagePullError);
    expect((blobs as ImagePullError).kind).toBe('disk');
    expect(blobs!.message).toMatch(
      /^image ".*lab\/disk:random": the host cannot take this image now: disk: 12\d MB asked, \d+ MB of \d+ MB committed \(data root \d+ MB × diskOvercommit 0\.5\); nothing was kept/,
    );
    expect(stored()).toEqual([]);
    expect(admission.roomMB()).toBe(roomBefore);

    // Blobs of well under 1 MB that unpack to 300 MiB: ended as they unpack, the half-unpacked layer removed.
    const unpacked = await pull('zeros').then(
      () => undefined,
      (err: Error) => err,
    );
    expect(unpacked).toBeInstanceOf(ImagePullError);
    expect(unpacked!.message).toMatch(
      /^image ".*lab\/disk:zeros": the host cannot take this image now: disk: it took the data root to \d+ MB of \d+ MB committed \(data root \d+ MB × diskOvercommit 0\.5\); nothing was kept/,
    );
    expect(stored()).toEqual([]);
    expect(admission.roomMB()).toBeGreaterThanOrEqual(roomBefore - 1);

    // A small image fits beside the filler and pulls whole.
    const small = await pull('small');
    expect(small.layers).toHaveLength(1);
    expect(fs.statSync(join(small.layers[0]!, 'small', 'small')).size).toBe(8 * MIB);
  } finally {
    free();
  }
  // With the room back, each refused image pulls (one at a time: together they pass the limit).
  for (const tag of ['random', 'zeros']) {
    fs.rmSync(store, { recursive: true, force: true });
    const image = await pull(tag);
    expect(fs.statSync(join(image.layers[0]!, tag, tag)).size).toBe((tag === 'zeros' ? 300 : 120) * MIB);
  }
});

test('a pull refused while another pull of the store finishes removes its own blobs and layers, not the other image', async () => {
  fs.rmSync(store, { recursive: true, force: true });
  const free = leaveRoom(100);
  try {
    // The refused pull takes its snapshot of the store, then waits in its disk check until the small image is pulled
    // whole beside it: the small image's blobs and layer appeared while the refused pull ran.
    let smallPulled: (() => void) | undefined;
    const pulledBeside = new Promise<void>((resolve) => (smallPulled = resolve));
    const waiting: Parameters<typeof pullImage>[1]['disk'] = {
      guard: (mb, what, fn) => admission.guard(mb, what, async (signal) => (await pulledBeside, fn(signal))),
    };
    const refused = pullImage(`${registry!.host}/lab/disk:zeros`, { storeDir: store, disk: waiting }).then(
      () => undefined,
      (err: Error) => err,
    );
    const small = await pull('small');
    smallPulled!();
    expect((await refused)?.message).toMatch(/lab\/disk:zeros": the host cannot take this image now: .*nothing was kept/);
    // The small image is whole: its layer, its blobs and its record stay, and it is a cached pull now.
    expect(fs.statSync(join(small.layers[0]!, 'small', 'small')).size).toBe(8 * MIB);
    const again: string[] = [];
    await pullImage(`${registry!.host}/lab/disk:small`, { storeDir: store, disk: admission, onLine: (l) => again.push(l) });
    expect(again.filter((l) => l.includes('layer 1/1'))).toEqual([expect.stringMatching(/: cached$/)]);
    // The refused image left no layer: only the small one's is there.
    expect(stored().filter((p) => p.startsWith('layers/'))).toEqual([expect.stringContaining(small.layers[0]!.split('/').pop()!)]);
  } finally {
    free();
  }
});
