/**
 * A sandbox's disk is mounted by the build's loop-mount program (src/runtime/loop-mount.c): the image on its
 * directory as ext4 with noatime and noinit_itable, through a loop device of its own that the kernel frees when the
 * directory is unmounted. An image still on a loop device (unmounted lazily while busy) is mounted from that device
 * again, never from a second one (two ext4 instances on one file). What it refuses (a missing image, a directory that does not exist, an image that is no
 * file system) fails with the reason and leaves no loop device behind. Real loop devices; root only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseMountinfo } from '../../../src/runtime/cgroup-layout';
import { formatImage } from '../../../src/runtime/disk-pool';
import { loopMountArgv, loopMountProgram } from '../../../src/runtime/sandbox-disk';
import { exec, execOk } from '../../../src/util/exec';

jest.setTimeout(60_000);

let scratch: string;

beforeEach(() => {
  scratch = fs.mkdtempSync('/var/tmp/sk-loop-mount-test-');
});

afterEach(async () => {
  for (const m of mountsUnder(scratch).reverse()) if ((await exec(['umount', m])).code !== 0) await exec(['umount', '-l', m]);
  for (const dev of await loopsOf(scratch)) await exec(['losetup', '-d', dev]);
  fs.rmSync(scratch, { recursive: true, force: true });
});

function mountsUnder(dir: string) {
  return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'))
    .filter((m) => m.mountPoint.startsWith(`${dir}/`))
    .map((m) => m.mountPoint);
}

/**
 * The loop devices still bound once the last mount of their image went: the kernel frees an autoclear device in a
 * work item after the unmount returns, so a loaded host may show it for a moment; polled for up to 5 s.
 */
async function loopsLeft(dir: string): Promise<string[]> {
  const until = Date.now() + 5000;
  for (;;) {
    const left = await loopsOf(dir);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The loop devices whose backing file lies in `dir`. */
async function loopsOf(dir: string): Promise<string[]> {
  const out = await execOk(['losetup', '-l', '-n', '-O', 'NAME,BACK-FILE']);
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, back]) => back?.startsWith(`${dir}/`))
    .map(([name]) => name!);
}

test('the build has the program, and a disk mounted by it is the image with its options; unmounted, its loop device is gone', async () => {
  const program = loopMountProgram();
  expect(program).toBeDefined();
  const image = path.join(scratch, 'a.disk');
  const dir = path.join(scratch, 'a');
  fs.mkdirSync(dir);
  await formatImage(image, 64);
  const argv = loopMountArgv(image, dir);
  expect(argv).toEqual([program, image, dir]);
  await execOk(argv);
  const shown = JSON.parse(await execOk(['findmnt', '-J', '-o', 'FSTYPE,OPTIONS,SOURCE', dir])) as {
    filesystems: Array<{ fstype: string; options: string; source: string }>;
  };
  const [mount] = shown.filesystems;
  expect(mount?.fstype).toBe('ext4');
  expect(mount?.options.split(',')).toEqual(expect.arrayContaining(['rw', 'noatime', 'noinit_itable']));
  const loops = await loopsOf(scratch);
  expect(loops).toHaveLength(1);
  expect(mount?.source).toBe(loops[0]);
  // The legitimate use: the sandbox writes into it, up to its size.
  fs.writeFileSync(path.join(dir, 'f'), Buffer.alloc(1024 * 1024, 1));
  expect(Math.round((fs.statfsSync(dir).blocks * fs.statfsSync(dir).bsize) / (1024 * 1024))).toBeLessThanOrEqual(64);
  await execOk(['umount', dir]);
  expect(await loopsLeft(scratch)).toEqual([]);
});

test('an image unmounted lazily while a file in it is open is mounted again from the same loop device', async () => {
  const program = loopMountProgram()!;
  const image = path.join(scratch, 'c.disk');
  const dir = path.join(scratch, 'c');
  fs.mkdirSync(dir);
  await formatImage(image, 64);
  await execOk([program, image, dir]);
  const [first] = await loopsOf(scratch);
  fs.writeFileSync(path.join(dir, 'kept'), 'written before');
  const held = fs.openSync(path.join(dir, 'kept'), 'r');
  try {
    expect((await exec(['umount', dir])).code).not.toBe(0); // busy
    await execOk(['umount', '-l', dir]);
    expect(await loopsOf(scratch)).toEqual([first]); // alive on its device while the file is open
    // Asked by another spelling of its path: the same image, the same device.
    await execOk([program, `${scratch}/./c.disk`, dir]);
    expect(await loopsOf(scratch)).toEqual([first]);
    expect(fs.readFileSync(path.join(dir, 'kept'), 'utf8')).toBe('written before');
  } finally {
    fs.closeSync(held);
  }
  await execOk(['umount', dir]);
  expect(await loopsLeft(scratch)).toEqual([]);
});

test('a missing image, a missing directory and an image with no file system fail with the reason and leave no loop device', async () => {
  const program = loopMountProgram()!;
  const dir = path.join(scratch, 'd');
  fs.mkdirSync(dir);
  const missing = await exec([program, path.join(scratch, 'missing.disk'), dir]);
  expect([missing.code, missing.stderr.trim()]).toEqual([
    1,
    `loop-mount: open ${path.join(scratch, 'missing.disk')}: No such file or directory`,
  ]);
  const image = path.join(scratch, 'b.disk');
  await formatImage(image, 64);
  const noDir = await exec([program, image, path.join(scratch, 'nowhere')]);
  expect([noDir.code, noDir.stderr.trim()]).toEqual([
    1,
    `loop-mount: mount on ${path.join(scratch, 'nowhere')}: No such file or directory`,
  ]);
  const blank = path.join(scratch, 'blank.disk');
  fs.writeFileSync(blank, Buffer.alloc(1024 * 1024));
  const notExt4 = await exec([program, blank, dir]);
  expect(notExt4.code).toBe(1);
  expect(notExt4.stderr).toMatch(/^loop-mount: mount on .*: Invalid argument/);
  expect(await loopsLeft(scratch)).toEqual([]);
  expect(mountsUnder(scratch)).toEqual([]);
  const usage = await exec([program, image]);
  expect([usage.code, usage.stderr.trim()]).toEqual([2, 'usage: loop-mount IMAGE DIR']);
});
