/**
 * The data directory's shared mount (sandbox-disk.ts): one memo per process, whatever spelling of the path a caller
 * uses, cleared by releaseDataDir, so a disk mounted after a release lies below a directory that is shared again, and
 * retried after a failure. Real bind mounts and loop disks; root only; no containers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseMountinfo } from '../../../src/runtime/cgroup-layout';
import { makeSandboxDisk, releaseDataDir, removeSandboxDisk, shareDataDir } from '../../../src/runtime/sandbox-disk';
import { exec } from '../../../src/util/exec';

jest.setTimeout(60_000);

let scratch: string;

beforeEach(() => {
  scratch = fs.mkdtempSync('/var/tmp/sk-data-dir-test-');
});

afterEach(async () => {
  // Innermost first: disks, then the directory's own binds (a failed test may leave any of them).
  const mine = () =>
    parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'))
      .map((m) => m.mountPoint)
      .filter((m) => m === scratch || m.startsWith(`${scratch}/`));
  for (let left = mine(); left.length > 0; left = mine()) {
    const deepest = left.sort((a, b) => b.length - a.length)[0]!;
    if ((await exec(['umount', deepest])).code !== 0) await exec(['umount', '-l', deepest]);
  }
  for (const image of fs
    .readdirSync(scratch, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.disk'))) {
    // Only this image's devices (`losetup -D` would detach every device of the host).
    const bound = await exec(['losetup', '-n', '-O', 'NAME', '-j', path.join(scratch, image)]);
    for (const dev of bound.stdout.split('\n').filter((l) => l.trim() !== '')) await exec(['losetup', '-d', dev.trim()]);
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** The mounts on `dir` (innermost last) with whether each is shared. */
function ownMounts(dir: string): Array<{ shared: boolean }> {
  return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'))
    .filter((m) => m.mountPoint === dir)
    .map((m) => ({ shared: m.optional.some((o) => o.startsWith('shared:')) }));
}

/**
 * Whether a disk mounted on the host below `dir` (by `mount`, run once a slave mount namespace exists: what every
 * runtime call is) reaches that namespace.
 */
async function reachesSlaveNamespace(disk: string, mount: () => Promise<void>): Promise<boolean> {
  const gate = fs.mkdtempSync(path.join(scratch, 'gate-'));
  const script = `touch ${gate}/ready; while [ ! -e ${gate}/go ]; do sleep 0.05; done; grep -c " ${disk} " /proc/self/mountinfo`;
  const inside = exec(['unshare', '--mount', '--propagation', 'slave', 'sh', '-c', script], { timeoutMs: 50_000 });
  try {
    while (!fs.existsSync(`${gate}/ready`)) await new Promise((r) => setTimeout(r, 50));
    await mount();
  } finally {
    fs.writeFileSync(`${gate}/go`, '');
  }
  return (await inside).stdout.trim() === '1';
}

test('after releaseDataDir (under another spelling of the path) the next disk shares the directory again', async () => {
  const dir = path.join(scratch, 'data');
  await shareDataDir(dir);
  expect(ownMounts(dir)).toEqual([{ shared: true }]);
  await shareDataDir(`${dir}/`); // the same directory: remembered, no second bind
  expect(ownMounts(dir)).toEqual([{ shared: true }]);

  await makeSandboxDisk(path.join(dir, 'sb1'), 64);
  await releaseDataDir(dir); // a disk is still below: the bind stays
  expect(ownMounts(dir)).toEqual([{ shared: true }]);
  await removeSandboxDisk(path.join(dir, 'sb1'));

  await releaseDataDir(`${dir}/./`);
  expect(ownMounts(dir)).toEqual([]);

  // A later disk: its directory is bound and shared again before the disk is mounted below it.
  await shareDataDir(dir);
  expect(ownMounts(dir)).toEqual([{ shared: true }]);
  const sb2 = path.join(dir, 'sb2');
  expect(await reachesSlaveNamespace(sb2, () => makeSandboxDisk(sb2, 64))).toBe(true);
  await removeSandboxDisk(sb2);
  await releaseDataDir(dir);
  expect(ownMounts(dir)).toEqual([]);
});

test('a failed share is not remembered: the next call tries again and succeeds once the cause is gone', async () => {
  const dir = path.join(scratch, 'data');
  const sb = path.join(dir, 'sb1');
  fs.mkdirSync(dir);
  await makeSandboxDisk(sb, 64); // a disk below a directory that is no mount point of its own
  await expect(shareDataDir(dir)).rejects.toThrow(/has sandbox disks mounted .*sb1.* but is no mount point of its own/);
  expect(ownMounts(dir)).toEqual([]);
  await removeSandboxDisk(sb);
  await shareDataDir(dir);
  expect(ownMounts(dir)).toEqual([{ shared: true }]);
  await releaseDataDir(dir);
  expect(ownMounts(dir)).toEqual([]);
});
