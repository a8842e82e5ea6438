/**
 * A sandbox's disk: a sparse file of the sandbox's size, formatted ext4 and loop-mounted on the sandbox's directory
 * (its upper and work dirs and its config live on it). A write past the size gets ENOSPC inside the sandbox, `df /`
 * there shows the size (overlayfs reports the file system of its upper dir), and the host's file system gives the
 * sandbox at most that many bytes, as it writes them (the file is sparse).
 *
 * Why not project quotas on the data root (XFS prjquota, ext4 `project`): they are the cheaper way where the kernel
 * has them, but kernels built without CONFIG_XFS_QUOTA / CONFIG_QUOTA refuse such mounts, and a loop image works
 * on every kernel with loop devices; docs/runtime.md (Disk) has the measurements.
 *
 * Sandboxes and build steps take their images formatted already from a pool that formats the next in the
 * background (disk-pool.ts), so mkfs is off a create's path; volumes format theirs at creation.
 *
 * One per cent of the blocks is reserved for host root (ext4's root reserve): the sandbox's own processes run as
 * unprivileged host ids and cannot take it, so the runtime can still write the sandbox's config.json and its
 * runtime's pid file into a full disk.
 *
 * The directory holding the disks is a shared mount of its own (shareDataDir, one memo per process). Every runtime call and build step
 * runs in a mount namespace of its own (oci-cli.ts), which starts with a copy of every mount of the host, the other
 * sandboxes' disks among them; it is made a slave of the host's mounts, so when the host unmounts a disk (pause to
 * disk, kill) the copy goes too, and the loop device is freed at once, not when the longest call in flight returns.
 * The host's root mount is private where the kit runs in a container, hence a shared mount of the kit's own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec, execOk } from '../util/exec';
import { bundledProgram } from './bundled-program';
import { parseMountinfo } from './cgroup-layout';
import { closePool, formatImage, type DiskPool } from './disk-pool';

export const MIB = 1024 * 1024;

/** The smallest and largest disk a sandbox can have (the stack's settings stay within these). */
export const DISK_MB_RANGE = { min: 64, max: 1024 * 1024 } as const;

/** The disk a sandbox gets when its template and the stack say nothing: 1 GiB. */
export const DEFAULT_DISK_MB = 1024;

/** The image file of a sandbox's disk, beside its directory (a sandbox ID never holds a dot). */
export function diskImagePath(sandboxDir: string): string {
  return `${sandboxDir}.disk`;
}

/** Whether `dir` is a mount point (its device differs from its parent's). */
export function isMountPoint(dir: string): boolean {
  const here = fs.statSync(dir, { throwIfNoEntry: false });
  const parent = fs.statSync(`${dir}/..`, { throwIfNoEntry: false });
  return here !== undefined && parent !== undefined && here.dev !== parent.dev;
}

/**
 * Makes the image (sparse, `sizeMB`), formats it and mounts it on `dir` (an empty directory, created if missing).
 * `mode`: of the disk's root directory (a sandbox's directory is the host's alone; a volume's is shared, volumes/).
 * With `pool` (disk-pool.ts) a formatted image is taken from it when one is ready, and the pool keeps the size ready.
 */
export async function makeSandboxDisk(dir: string, sizeMB: number, mode = 0o700, pool?: DiskPool): Promise<void> {
  if (!Number.isInteger(sizeMB) || sizeMB < DISK_MB_RANGE.min || sizeMB > DISK_MB_RANGE.max)
    throw new Error(`disk size ${sizeMB} MB: expected an integer from ${DISK_MB_RANGE.min} to ${DISK_MB_RANGE.max}`);
  const image = diskImagePath(dir);
  if (fs.existsSync(image)) throw new Error(`disk image ${image} exists already`);
  if (!pool?.take(image, sizeMB)) await formatImage(image, sizeMB);
  try {
    await mountSandboxDisk(dir, mode);
  } catch (err) {
    fs.rmSync(image, { force: true });
    throw err;
  } finally {
    pool?.want(sizeMB);
  }
}

/** The build's loop-mount program (loop-mount.c); undefined when it is missing or not executable. */
export function loopMountProgram(): string | undefined {
  return bundledProgram('loop-mount');
}

/**
 * The argv that mounts `image` on `dir`: noatime, and noinit_itable (no background thread zeroing inode tables: it
 * would write the whole table into the sparse file); the loop device is freed when `dir` is unmounted. Through the
 * loop-mount program when the build has it, else `mount -o loop`, whose scan of every loop device grows with the
 * sandboxes running.
 */
export function loopMountArgv(image: string, dir: string, program = loopMountProgram()): string[] {
  return program !== undefined ? [program, image, dir] : ['mount', '-t', 'ext4', '-o', 'loop,noatime,noinit_itable', image, dir];
}

/** Mounts the sandbox's image on `dir` unless it is mounted already (after a host restart it is not). */
export async function mountSandboxDisk(dir: string, mode = 0o700): Promise<void> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isMountPoint(dir)) return;
  await execOk(loopMountArgv(diskImagePath(dir), dir), { timeoutMs: 30_000 });
  fs.chmodSync(dir, mode);
}

/** The size in MB of the file system holding `dir` (or its nearest existing parent). */
export function fileSystemMB(dir: string): number {
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  const st = fs.statfsSync(at);
  return Math.floor((st.blocks * st.bsize) / MIB);
}

/** Whether the sandbox at `dir` has a disk image. */
export function hasSandboxDisk(dir: string): boolean {
  return fs.existsSync(diskImagePath(dir));
}

/** Unmounts the disk (the loop device goes with it), keeping the image for a later mountSandboxDisk; idempotent. */
export async function unmountSandboxDisk(dir: string): Promise<void> {
  if (!isMountPoint(dir)) return;
  const r = await exec(['umount', dir]);
  // Busy (a process of the host still has a file open there): detach now, the kernel frees it when closed.
  if (r.code !== 0) await execOk(['umount', '-l', dir]);
}

/** Unmounts the disk and removes the image (with `pool`: discarded through it, disk-pool.ts); idempotent. */
export async function removeSandboxDisk(dir: string, pool?: DiskPool): Promise<void> {
  await unmountSandboxDisk(dir);
  if (pool) pool.discard(diskImagePath(dir));
  else fs.rmSync(diskImagePath(dir), { force: true });
}

function mountsOf(dir: string): { own: { optional: string[] } | undefined; below: string[] } {
  const mounts = parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  return {
    own: mounts.filter((m) => m.mountPoint === dir).at(-1),
    below: mounts.filter((m) => m.mountPoint.startsWith(`${dir}/`)).map((m) => m.mountPoint),
  };
}

/**
 * Makes `dir` (the directory of the sandboxes' directories and disks) a shared mount point: bound on itself unless
 * it is a mount point already, then marked shared. Idempotent.
 */
async function makeShared(dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { own, below } = mountsOf(dir);
  if (own === undefined) {
    // A bind on top would hide the disks mounted below it from the sandboxes' paths.
    if (below.length > 0)
      throw new Error(
        `${dir} has sandbox disks mounted (${below[0]}) but is no mount point of its own: unmount them first (sandbox-kit down)`,
      );
    await execOk(['mount', '--bind', dir, dir]);
  } else if (own.optional.some((o) => o.startsWith('shared:'))) return;
  await execOk(['mount', '--make-shared', dir]);
}

/**
 * The one memo of shared data directories in this process (the runtime's data dir, the volumes dir), by absolute
 * path: a directory is made shared once, again after a failure, and again after releaseDataDir gave its mount up.
 */
const shared = new Map<string, Promise<void>>();

/** `dir` made a shared mount point (makeShared) unless this process did so already; run before mounting a disk below it. */
export function shareDataDir(dir: string): Promise<void> {
  const key = path.resolve(dir);
  let sharing = shared.get(key);
  if (sharing === undefined) {
    const made = makeShared(key).catch((err: unknown) => {
      if (shared.get(key) === made) shared.delete(key);
      throw err;
    });
    sharing = made;
    shared.set(key, sharing);
  }
  return sharing;
}

/**
 * Closes the disk pool of `dir` (disk-pool.ts: its images removed) and undoes shareDataDir's bind once no disk is mounted below `dir` (a sandbox still there keeps it); idempotent. The
 * memo is cleared either way, so the next disk below `dir` shares it again (a no-op while the bind stays).
 */
export async function releaseDataDir(dir: string): Promise<void> {
  const key = path.resolve(dir);
  await closePool(key);
  await shared.get(key)?.catch(() => undefined);
  shared.delete(key);
  const { own, below } = mountsOf(key);
  if (own !== undefined && below.length === 0) await execOk(['umount', key]);
}
