/**
 * A sandbox's disk and its loop device (sandbox-disk.ts): mounted through a loop device set up by losetup and detached
 * at once, so the device lives exactly as long as the mount; and what a crash between the two leaves is found and
 * detached by detachLoopsBelow (cleanup.ts). Real images and loop devices; root only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { detachLoopsBelow, makeSandboxDisk, removeSandboxDisk } from '../../../src/runtime/sandbox-disk';
import { exec, execOk } from '../../../src/util/exec';

jest.setTimeout(60_000);

let scratch: string;

/** Loop devices backed by a file under the scratch directory. */
async function loopsBelow(dir: string): Promise<string[]> {
  const listed = await execOk(['losetup', '--list', '--noheadings', '--raw', '--output', 'NAME,BACK-FILE']);
  return listed
    .split('\n')
    .filter((l) => l.includes(`${dir}/`))
    .map((l) => l.split(' ')[0]!);
}

beforeEach(() => {
  scratch = fs.mkdtempSync('/var/tmp/sk-disk-loop-test-');
});

afterEach(async () => {
  for (const m of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const point = m.split(' ')[4];
    if (point?.startsWith(`${scratch}/`)) await exec(['umount', '-l', point]);
  }
  for (const device of await loopsBelow(scratch)) await exec(['losetup', '--detach', device]);
  fs.rmSync(scratch, { recursive: true, force: true });
});

test("a disk's loop device lives as long as its mount, and no longer", async () => {
  const dir = path.join(scratch, 'sbx');
  await makeSandboxDisk(dir, 64);
  // The disk works as the sandbox's: written, read back.
  fs.writeFileSync(path.join(dir, 'file'), 'kept');
  expect(fs.readFileSync(path.join(dir, 'file'), 'utf8')).toBe('kept');
  const devices = await loopsBelow(scratch);
  expect(devices).toHaveLength(1);
  // Marked to go with its mount (the kernel's autoclear): losetup shows it so.
  expect((await execOk(['losetup', '--list', '--noheadings', '--output', 'AUTOCLEAR', devices[0]!])).trim()).toBe('1');
  await removeSandboxDisk(dir);
  // The kernel may clear it just after the unmount returns.
  let left = await loopsBelow(scratch);
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await loopsBelow(scratch);
  }
  expect(left).toEqual([]);
});

test('a loop device a crash left on an image under the data dir is detached by detachLoopsBelow, others are not', async () => {
  const image = path.join(scratch, 'left behind.disk');
  const other = fs.mkdtempSync('/var/tmp/sk-disk-loop-other-');
  const otherImage = path.join(other, 'x.disk');
  try {
    for (const f of [image, otherImage]) {
      fs.writeFileSync(f, '');
      fs.truncateSync(f, 8 * 1024 * 1024);
    }
    const leaked = (await execOk(['losetup', '--find', '--show', image])).trim();
    const kept = (await execOk(['losetup', '--find', '--show', otherImage])).trim();
    try {
      expect(await detachLoopsBelow(scratch)).toEqual([leaked]);
      expect(await loopsBelow(scratch)).toEqual([]);
      expect(await loopsBelow(other)).toEqual([kept]);
    } finally {
      await exec(['losetup', '--detach', kept]);
    }
  } finally {
    fs.rmSync(other, { recursive: true, force: true });
  }
});
