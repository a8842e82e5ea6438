/**
 * A sandbox's disk, attacked from inside as root with the unmodified E2B SDK through the platform and the gateway:
 * filling it past its size gets ENOSPC and the host keeps its space; writing within it works; `df /` shows the
 * size; a template carries its own size (`minFreeDiskMb`), and one asking for more than the stack's maximum is
 * refused naming the limit, with nothing made; a create whose disk would take the disks together past the data
 * root's size × limits.diskOvercommit is refused (429) naming it, with nothing made. The same admission counts the
 * template layers on the data root and refuses, naming it, a volume whose disk and a build whose layer would pass it,
 * nothing made, while the smaller volume and build beside them work; an upload or an image pull past the room is
 * refused naming it (the SDK shows the refusal), nothing kept (a pull's legitimate use: pull-disk.test.ts). The platform's whole state lives
 * on a small file system of the test's own (a loop-mounted image), so the host's free space is measured there, free
 * of other processes' writes, and its size is the data root's. The fill runs again on a platform with runtime runsc
 * (gVisor), on a small file system of its own.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformAndGateway } from '../integration/platform/helpers/platform-and-gateway';
import { sandboxTraces, startPlatformAndGateway } from '../integration/platform/helpers/platform-and-gateway';
import { SdkDriver } from '../integration/platform/helpers/sdk-driver';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../integration/runtime/helpers/common';
import { makeLoopVolume, type LoopVolume } from './helpers/loop-volume';
import { OciLayoutImages } from '../../src/lab/oci-images';
import { startLabRegistry } from '../../src/lab/registry';

jest.setTimeout(240_000);

const MIB = 1024 * 1024;
/** The stack's limits for this platform: small, so filling a disk is quick. */
const DISK_DEFAULT_MB = 160;
const DISK_MAX_MB = 400;
/** The data root's disks together may reach half its size: 2 disks of DISK_MAX_MB do not fit on this 1536 MiB one. */
const DISK_OVERCOMMIT = 0.5;
/** A volume's disk: fits beside the layers, not beside a sandbox of DISK_MAX_MB too. */
const VOLUME_MB = 360;

let scratch: string;
let volume: LoopVolume | undefined;
let stateDir: string;
let pg: PlatformAndGateway | undefined;
let sdk: SdkDriver | undefined;
/** A second platform with runtime runsc (gVisor), on a small file system of its own: the same fill through gVisor. */
let runsc: { pg?: PlatformAndGateway; volume: LoopVolume; stateDir: string } | undefined;

beforeAll(async () => {
  await baseRootfs();
  scratch = fs.mkdtempSync(join(tmpdir(), 'sk-disk-'));
  volume = makeLoopVolume(scratch, 1536);
  stateDir = join(volume.mountPoint, 'platform');
  const agent = await freshAgentPayload(join(scratch, 'bundle'));
  pg = await startPlatformAndGateway(stateDir, agent, {
    platform: {
      limits: { diskDefaultMB: DISK_DEFAULT_MB, diskMaxMB: DISK_MAX_MB, diskOvercommit: DISK_OVERCOMMIT, volumeMaxMB: VOLUME_MB },
    },
  });
  const runscVolume = makeLoopVolume(fs.mkdtempSync(join(scratch, 'runsc-')), 768);
  runsc = { volume: runscVolume, stateDir: join(runscVolume.mountPoint, 'platform') };
  runsc.pg = await startPlatformAndGateway(runsc.stateDir, agent, {
    platform: { limits: { diskDefaultMB: DISK_DEFAULT_MB, diskMaxMB: DISK_MAX_MB }, runtime: 'runsc' },
  });
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  try {
    await sdk?.close();
    for (const p of [pg, runsc?.pg]) {
      await p?.gateway.close();
      await p?.platform.close({ killSandboxes: true });
    }
  } finally {
    runsc?.volume.remove();
    volume?.remove();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
});

const opts = (p = pg!) => ({ ...p.opts, timeoutMs: 300_000 });

/** A root shell command in the sandbox; its output (stdout and stderr) whatever its exit code. */
async function asRoot(sandboxId: string, script: string): Promise<string> {
  const r = await sdk!.call<{ stdout: string; stderr: string }>(sandboxId, 'commands.run', `(${script}) 2>&1; true`, {
    user: 'root',
    timeoutMs: 120_000,
  });
  return r.stdout + r.stderr;
}

/** `df /` inside: the size and the free space of the root file system, in bytes. */
async function dfRoot(sandboxId: string): Promise<{ size: number; avail: number }> {
  const out = await asRoot(sandboxId, 'df -B1 --output=size,avail / | tail -n 1');
  const [size, avail] = out.trim().split(/\s+/).map(Number);
  return { size: size!, avail: avail! };
}

// The default runtime (crun, or what SANDBOX_KIT_TEST_RUNTIME asks for), then runsc: its writes reach the same kind
// of disk through gVisor's gofer.
test.each([
  ['default runtime', () => ({ pg: pg!, volume: volume!, stateDir })],
  ['runsc', () => ({ pg: runsc!.pg!, volume: runsc!.volume, stateDir: runsc!.stateDir })],
] as const)(
  "%s: filling the disk as root gets ENOSPC at the sandbox's size; the host keeps its space; writes within it work",
  async (_name, rig) => {
    const { pg: p, volume: v, stateDir: dir } = rig();
    const { sandboxId } = await sdk!.create('base', opts(p));
    try {
      const df = await dfRoot(sandboxId);
      // The sandbox sees its own disk (ext4 keeps a few per cent for its metadata), not the host's.
      expect(df.size).toBeLessThanOrEqual(DISK_DEFAULT_MB * MIB);
      expect(df.size).toBeGreaterThan(DISK_DEFAULT_MB * MIB * 0.9);
      expect(df.avail).toBeLessThan(DISK_DEFAULT_MB * MIB);

      // Asking for 2 GiB at once: refused outright, nothing taken from the host.
      const hostBefore = v.freeBytes();
      // (ext4 may keep the blocks it reserved before it gave up: unwritten, so the image on the host does not grow.)
      const fallocate = await asRoot(sandboxId, 'fallocate -l 2G /big; echo "exit $?"; rm -f /big');
      expect(fallocate).toMatch(/No space left on device/);
      expect(fallocate).toMatch(/exit 1/);
      expect(v.freeBytes()).toBeGreaterThan(hostBefore - 4 * MIB);

      // Writing until it stops: dd ends with ENOSPC near the size; the host gave at most the sandbox's size.
      const dd = await asRoot(sandboxId, 'dd if=/dev/zero of=/fill bs=1M count=2048; echo "exit $?"; sync');
      expect(dd).toMatch(/No space left on device/);
      expect(dd).toMatch(/exit 1/);
      const written = Number(/(\d+) bytes/.exec(dd)?.[1]);
      expect(written).toBeGreaterThan(DISK_DEFAULT_MB * MIB * 0.8);
      expect(written).toBeLessThanOrEqual(DISK_DEFAULT_MB * MIB);
      const taken = hostBefore - v.freeBytes();
      expect(taken).toBeLessThanOrEqual(DISK_DEFAULT_MB * MIB + 8 * MIB);
      // Another way in (the agent's own file writes) hits the same wall, and the agent keeps answering.
      await expect(sdk!.call(sandboxId, 'files.write', '/root/more', 'x'.repeat(4 * MIB))).rejects.toThrow();
      expect((await asRoot(sandboxId, 'echo alive')).trim()).toBe('alive');

      // Space freed inside is usable again: a write within the size works and reads back.
      const within = await asRoot(
        sandboxId,
        'rm /fill && dd if=/dev/urandom of=/data bs=1M count=64 status=none && sha256sum /data | cut -c1-64 && cp /data /data2 && cmp /data /data2 && echo same',
      );
      expect(within).toMatch(/^[0-9a-f]{64}\nsame\n$/);
    } finally {
      await sdk!.static('kill', sandboxId, opts(p));
    }
    expect(sandboxTraces(p.platform, dir, sandboxId)).toEqual([]);
  },
);

test('a template carries its disk (minFreeDiskMb); one asking for more than the maximum is refused naming it, nothing made', async () => {
  const refused = sdk!.build('disk-too-big', 'true', { ...opts(), minFreeDiskMb: DISK_MAX_MB + 1 });
  await expect(refused).rejects.toThrow(
    `minFreeDiskMb: ${DISK_MAX_MB + 1} is more than this platform's maximum disk of ${DISK_MAX_MB} MB per sandbox (setting limits.diskMaxMB)`,
  );
  expect(await sdk!.template('exists', 'disk-too-big', opts())).toBe(false);
  const listed = (await (await fetch(`${pg!.opts.apiUrl}/templates`, { headers: { 'x-api-key': pg!.opts.apiKey } })).json()) as Array<{
    names: string[];
    diskSizeMB: number;
  }>;
  expect(listed.flatMap((t) => t.names)).not.toContain('disk-too-big');

  const wanted = DISK_MAX_MB - 100;
  await sdk!.build('disk-roomy', 'true', { ...opts(), minFreeDiskMb: wanted });
  const { sandboxId } = await sdk!.create('disk-roomy', opts());
  try {
    const df = await dfRoot(sandboxId);
    expect(df.size).toBeLessThanOrEqual(wanted * MIB);
    expect(df.size).toBeGreaterThan(wanted * MIB * 0.9);
    const info = (await (
      await fetch(`${pg!.opts.apiUrl}/sandboxes/${sandboxId}`, { headers: { 'x-api-key': pg!.opts.apiKey } })
    ).json()) as { diskSizeMB: number };
    expect(info.diskSizeMB).toBe(wanted);
  } finally {
    await sdk!.static('kill', sandboxId, opts());
  }
});

/** The data root's size and its limit (size × diskOvercommit), as the platform reads them. */
function dataRoot(): { rootMB: number; limitMB: number } {
  const st = fs.statfsSync(volume!.mountPoint);
  const rootMB = Math.floor((st.blocks * st.bsize) / MIB);
  return { rootMB, limitMB: Math.floor(rootMB * DISK_OVERCOMMIT) };
}

/** The disk images the platform made (sandboxes', build steps', volumes'), anywhere under its state dir. */
function images(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isFile() && e.name.endsWith('.disk')) out.push(e.name);
      // Not into a mounted disk (its files are a sandbox's), nor a template layer (thousands of files).
      else if (e.isDirectory() && e.name !== 'layers' && fs.statSync(join(dir, e.name)).dev === fs.statSync(dir).dev)
        walk(join(dir, e.name));
    }
  };
  walk(stateDir);
  return out.sort();
}

/** The template layers' directories (step layers and their shifted copies). */
const layerDirs = () => fs.readdirSync(join(stateDir, 'templates', 'layers')).sort();

test("a create whose disk would take the disks past the data root's size × diskOvercommit is refused naming it; nothing is made", async () => {
  await sdk!.build('disk-admit', 'true', { ...opts(), minFreeDiskMb: DISK_MAX_MB });
  const { rootMB, limitMB } = dataRoot();
  const first = await sdk!.create('disk-admit', opts());
  try {
    expect(images()).toEqual([`${first.sandboxId}.disk`]);
    // The second would commit 2 × DISK_MAX_MB, past half the data root.
    const refused = await sdk!.create('disk-admit', opts()).then(
      () => undefined,
      (err: Error) => err.message,
    );
    const m = new RegExp(
      `the host cannot take this sandbox now: disk: ${DISK_MAX_MB} MB asked, (\\d+) MB of ${limitMB} MB committed \\(data root ${rootMB} MB × diskOvercommit ${DISK_OVERCOMMIT}\\)`,
    ).exec(refused ?? '');
    expect(m).not.toBeNull();
    // The first sandbox's disk at its size, and what else the file system holds (the template's layer among it).
    expect(Number(m![1])).toBeGreaterThanOrEqual(DISK_MAX_MB);
    expect(Number(m![1]) + DISK_MAX_MB).toBeGreaterThan(limitMB);
    expect(images()).toEqual([`${first.sandboxId}.disk`]);
    const [page] = await sdk!.list(opts());
    expect(page!.items.map((i) => i.sandboxId)).toEqual([first.sandboxId]);
  } finally {
    await sdk!.static('kill', first.sandboxId, opts());
  }
  // Its disk gone, the same create is admitted.
  const second = await sdk!.create('disk-admit', opts());
  await sdk!.static('kill', second.sandboxId, opts());
  expect(images()).toEqual([]);
});

test('creates and a volume sent at once cannot together take the room: one is admitted, the others are refused naming diskOvercommit; nothing of them is left', async () => {
  await sdk!.build('disk-admit', 'true', { ...opts(), minFreeDiskMb: DISK_MAX_MB });
  const { limitMB } = dataRoot();
  // Any two of these pass half the data root together (2 × DISK_MAX_MB, DISK_MAX_MB + VOLUME_MB); each fits alone.
  for (let round = 0; round < 3; round++) {
    const settled = await Promise.allSettled([
      sdk!.create('disk-admit', opts()).then((s) => ({ sandboxId: s.sandboxId })),
      sdk!.create('disk-admit', opts()).then((s) => ({ sandboxId: s.sandboxId })),
      sdk!.volume<{ volumeId: string }>('create', `adp-race-${round}`, opts()).then((v) => ({ volumeId: v.volumeId })),
    ]);
    const admitted = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = settled.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    try {
      expect(admitted).toHaveLength(1);
      for (const message of refused)
        expect(message).toMatch(new RegExp(`MB committed \\(data root \\d+ MB × diskOvercommit ${DISK_OVERCOMMIT}\\)`));
      // What was admitted is all that was made.
      expect(images()).toEqual([`${'sandboxId' in admitted[0]! ? admitted[0].sandboxId : admitted[0]!.volumeId}.disk`]);
      expect(limitMB).toBeLessThan(2 * DISK_MAX_MB);
    } finally {
      for (const a of admitted) {
        if ('sandboxId' in a) await sdk!.static('kill', a.sandboxId, opts());
        else await sdk!.volume('destroy', a.volumeId, opts());
      }
    }
    expect(images()).toEqual([]);
  }
});

/** `mb` MiB of random bytes into the layer (random: nothing compresses or dedups them). */
const writeMB = (mb: number) => `head -c ${mb}M /dev/urandom > /home/user/fill-${mb} && sync`;

test('volumes and template builds go through the same admission: a volume or a layer past the room is refused naming limits.diskOvercommit, nothing made; the smaller ones work', async () => {
  await sdk!.build('disk-admit', 'true', { ...opts(), minFreeDiskMb: DISK_MAX_MB });
  const holder = await sdk!.create('disk-admit', opts());
  const volumesBefore = (await sdk!.volume<unknown[]>('list', opts())).length;
  let layersBefore: string[];
  try {
    // The sandbox's disk (DISK_MAX_MB) and a volume's (VOLUME_MB) pass half the data root together.
    await expect(sdk!.volume('create', 'adp-too-much', opts())).rejects.toThrow(
      new RegExp(
        `cannot create the volume: the host cannot take this volume now: disk: ${VOLUME_MB} MB asked, .*diskOvercommit ${DISK_OVERCOMMIT}\\); nothing was made`,
      ),
    );
    expect(await sdk!.volume<unknown[]>('list', opts())).toHaveLength(volumesBefore);
    expect(images()).toEqual([`${holder.sandboxId}.disk`]);

    // A step writing 200 MB: its layer, beside the sandbox's disk and the step's own, passes it.
    layersBefore = layerDirs();
    await expect(sdk!.build('adp-layer-big', writeMB(200), opts())).rejects.toThrow(
      /the host cannot take this build step's layer now: disk: 2\d\d MB asked, \d+ MB of \d+ MB committed \(data root \d+ MB × diskOvercommit 0\.5\)/,
    );
    expect(images()).toEqual([`${holder.sandboxId}.disk`]);
    expect(layerDirs()).toEqual(layersBefore);

    // A step writing 20 MB builds beside it, and a sandbox of it has the file.
    await sdk!.build('adp-layer-small', writeMB(20), opts());
  } finally {
    await sdk!.static('kill', holder.sandboxId, opts());
  }
  const small = await sdk!.create('adp-layer-small', opts());
  try {
    expect((await asRoot(small.sandboxId, 'stat -c %s /home/user/fill-20')).trim()).toBe(String(20 * MIB));
  } finally {
    await sdk!.static('kill', small.sandboxId, opts());
  }

  // The sandbox gone, the 200 MB layer is admitted, and the volume is.
  await sdk!.build('adp-layer-big', writeMB(200), opts());
  const vol = await sdk!.volume<{ volumeId: string }>('create', 'adp-fits', opts());
  try {
    expect(images()).toEqual([`${vol.volumeId}.disk`]);
    // The layers count as the blocks they take: the 200 MB layer is in what a create of DISK_MAX_MB meets now.
    const layersMB = Math.floor(
      Number(/^(\d+)/.exec(execFileSync('du', ['-s', '-x', '-B1', join(stateDir, 'templates', 'layers')], { encoding: 'utf8' }))![1]) / MIB,
    );
    expect(layersMB).toBeGreaterThanOrEqual(200);
    const refused = await sdk!.create('disk-admit', opts()).then(
      async (s) => {
        await sdk!.static('kill', s.sandboxId, opts());
        return 'admitted';
      },
      (err: Error) => err.message,
    );
    const committed = Number(/disk: \d+ MB asked, (\d+) MB of/.exec(refused)?.[1]);
    expect(committed).toBeGreaterThanOrEqual(VOLUME_MB + layersMB);
  } finally {
    expect(await sdk!.volume('destroy', vol.volumeId, opts())).toBe(true);
  }
  expect(images()).toEqual([]);
});

test('an upload (the files of a COPY) larger than the room the data root has left is refused, nothing kept; a small one beside it builds', async () => {
  // A volume holds most of the data root; the upload is sized past what is left, as the platform counts it.
  const vol = await sdk!.volume<{ volumeId: string }>('create', 'adp-upload-room', opts());
  const context = fs.mkdtempSync(join(scratch, 'ctx-'));
  /** The stored upload files (a team's directory may be made for the first one). */
  const uploads = () => {
    const dir = join(stateDir, 'templates', 'files');
    if (!fs.existsSync(dir)) return [];
    const names = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' });
    return names.filter((n) => fs.statSync(join(dir, n)).isFile()).sort();
  };
  try {
    const st = fs.statfsSync(volume!.mountPoint);
    const image = fs.statSync(join(stateDir, 'volumes', `${vol.volumeId}.disk`));
    const committedMB = ((st.blocks - st.bfree) * st.bsize + image.size - image.blocks * 512) / MIB;
    const bigMB = Math.max(64, Math.ceil(dataRoot().limitMB - committedMB) + 64);
    const fd = fs.openSync(join(context, 'big.bin'), 'w');
    for (let i = 0; i < bigMB; i++) fs.writeSync(fd, randomBytes(MIB));
    fs.closeSync(fd);
    fs.writeFileSync(join(context, 'small.txt'), 'small\n');
    const debian = { image: 'debian:bookworm' };
    const before = uploads();
    // The platform answers 429 naming limits.diskOvercommit from the upload's length, before reading its body, and
    // drops what the SDK still sends: the SDK shows the refusal (its status line), not a broken connection.
    await expect(
      sdk!.buildSteps('adp-upload-big', debian, [{ copy: { src: 'big.bin', dest: '/home/user/' } }], opts(), context),
    ).rejects.toThrow(
      new RegExp(
        `Failed to upload file: upload refused: the host cannot take this upload now: disk: \\d+ MB asked, \\d+ MB of ${dataRoot().limitMB} MB committed \\(data root ${dataRoot().rootMB} MB x diskOvercommit ${DISK_OVERCOMMIT}\\); nothing was kept`,
      ),
    );
    expect(uploads()).toEqual(before);
    await sdk!.buildSteps('adp-upload-small', debian, [{ copy: { src: 'small.txt', dest: '/home/user/' } }], opts(), context);
    expect(uploads().length).toBeGreaterThan(before.length);
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
    expect(await sdk!.volume('destroy', vol.volumeId, opts())).toBe(true);
  }
});

test('a template from an image that unpacks past the room fails naming limits.diskOvercommit, and nothing of the pull is kept', async () => {
  // A volume holds most of the data root; the image's layer (zeros: its blob is tiny) unpacks past what is left.
  const vol = await sdk!.volume<{ volumeId: string }>('create', 'adp-pull-room', opts());
  const work = fs.mkdtempSync(join(scratch, 'pull-'));
  const registry = await startLabRegistry({ dir: join(work, 'registry') });
  /** The template image store's blobs and unpacked layers. */
  const pulled = () => {
    const out: string[] = [];
    for (const sub of ['blobs/sha256', 'layers/100000-65536']) {
      const dir = join(stateDir, 'templates', 'images', sub);
      if (fs.existsSync(dir)) out.push(...fs.readdirSync(dir).map((f) => `${sub}/${f}`));
    }
    return out.sort();
  };
  try {
    const st = fs.statfsSync(volume!.mountPoint);
    const image = fs.statSync(join(stateDir, 'volumes', `${vol.volumeId}.disk`));
    const committedMB = ((st.blocks - st.bfree) * st.bsize + image.size - image.blocks * 512) / MIB;
    const zerosMB = Math.max(64, Math.ceil(dataRoot().limitMB - committedMB) + 64);
    const tree = join(work, 'tree');
    fs.mkdirSync(tree);
    const fd = fs.openSync(join(tree, 'zeros'), 'w');
    for (let i = 0; i < zerosMB; i++) fs.writeSync(fd, Buffer.alloc(MIB));
    fs.closeSync(fd);
    const images = new OciLayoutImages(join(work, 'layout'));
    await images.init('empty');
    await images.insert('empty', tree, '/data', 'zeros');
    await images.push('zeros', `${registry.host}/lab/zeros:1`);
    fs.rmSync(tree, { recursive: true, force: true });
    const before = pulled();
    await expect(sdk!.buildSteps('adp-pull-big', { image: `${registry.host}/lab/zeros:1` }, [], opts())).rejects.toThrow(
      /the host cannot take this image now: disk: it took the data root to \d+ MB of \d+ MB committed \(data root \d+ MB × diskOvercommit 0\.5\); nothing was kept/,
    );
    expect(pulled()).toEqual(before);
  } finally {
    await registry.stop();
    fs.rmSync(work, { recursive: true, force: true });
    expect(await sdk!.volume('destroy', vol.volumeId, opts())).toBe(true);
  }
});
