/**
 * Filesystems attached to a running sandbox (an MCP image server's image, pulled after the create answered): the
 * sandbox's attach dir (SandboxSpec.attachDir) is a read-only bind of `<bundle>/attached`, a slave of the host's
 * mounts (the container's root propagation is `rslave`), so a mount the host makes below `<bundle>/attached` appears
 * inside. An attached image is an overlay of its layers (read-only) with an upper dir of its own on the sandbox's
 * disk (writable by the sandbox, counted in its size), with a /dev of six nodes and the sandbox's own /proc, as a
 * chroot dir the runtime made at start has (oci-config.ts, chroot-proc.ts).
 *
 * Order, so that the host never mounts through a path the sandbox can change: the overlay is mounted and its /dev
 * and /proc mount points made at `<bundle>/attach-stage/<key>`, which the sandbox cannot see (an image's own `dev`
 * or `proc` that is not a plain directory is replaced first); the finished tree is then bound under
 * `<bundle>/attached/<key>/rootfs`, which propagates into the sandbox as a whole; last, the container's /proc is
 * bound into it from inside its mount namespace (chroot-proc.ts). Files beside it (`<bundle>/attached/<key>/<name>`)
 * are the host's to write and the sandbox's to read. crun and runc only: under runsc an image's filesystem is a layer
 * from the start (runsc.ts, attachesAfterStart).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec, execOk } from '../util/exec';
import { chrootProcArgv } from './chroot-proc';
import type { IdMapping } from './id-shift';
import { overlayOptions } from './oci-cli';
import { parseMountinfo } from './cgroup-layout';
import { CHROOT_DEVICES } from './oci-config';

/** Whether something is mounted on `dir` (a bind of a directory on itself too). */
function mounted(dir: string): boolean {
  return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8')).some((m) => m.mountPoint === dir);
}

/** A name of an attached filesystem or of a file beside it: one plain path component. */
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function attachedDir(bundle: string): string {
  return path.join(bundle, 'attached');
}

function checkName(kind: string, name: string): void {
  if (!NAME.test(name)) throw new Error(`${kind} ${JSON.stringify(name)} must be one plain name (letters, digits, . _ -)`);
}

/** The host's side of a sandbox's attach dir, made before the container starts. */
export function makeAttachedDir(bundle: string): string {
  const dir = attachedDir(bundle);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  return dir;
}

/** Writes (or, for null, removes) files beside an attached filesystem, each replaced whole (renamed into place). */
export function writeAttachedFiles(bundle: string, key: string, files: Record<string, string | null>): void {
  checkName('attached filesystem', key);
  const dir = path.join(attachedDir(bundle), key);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  for (const [name, text] of Object.entries(files)) {
    checkName('attached file', name);
    if (name === 'rootfs') throw new Error('attached file "rootfs" is the filesystem itself');
    const file = path.join(dir, name);
    if (text === null) {
      fs.rmSync(file, { force: true });
      continue;
    }
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, text, { mode: 0o644 });
    fs.renameSync(tmp, file);
  }
}

/** `dir/name` a plain directory owned by the sandbox's root: a link or a file there (from an image) is replaced. */
function plainDir(dir: string, name: string, owner: number): string {
  const at = path.join(dir, name);
  const st = fs.lstatSync(at, { throwIfNoEntry: false });
  if (st !== undefined && !st.isDirectory()) fs.rmSync(at, { recursive: true, force: true });
  if (st === undefined || !st.isDirectory()) {
    fs.mkdirSync(at, { mode: 0o755 });
    fs.chownSync(at, owner, owner);
  }
  return at;
}

export interface AttachImage {
  bundle: string;
  key: string;
  /** The image's filesystem layers, topmost first (already shifted to the sandbox's IDs). */
  layers: string[];
  /** The container's first process (its mount namespace). */
  pid: number;
  /** The attach dir inside the sandbox (SandboxSpec.attachDir). */
  attachDir: string;
  mapping: IdMapping;
}

/** Mounts an image's filesystem at `<attachDir>/<key>/rootfs` inside the running sandbox (see the header). */
export async function attachImageTree(o: AttachImage): Promise<void> {
  checkName('attached filesystem', o.key);
  const rootfs = path.join(attachedDir(o.bundle), o.key, 'rootfs');
  if (fs.existsSync(rootfs)) throw new Error(`${o.key} is attached already`);
  const changes = path.join(o.bundle, 'attached-changes', o.key);
  const stages = path.join(o.bundle, 'attach-stage');
  const stage = path.join(stages, o.key);
  for (const d of [path.join(changes, 'upper'), path.join(changes, 'work'), stage]) fs.mkdirSync(d, { recursive: true, mode: 0o755 });
  fs.chownSync(path.join(changes, 'upper'), o.mapping.base, o.mapping.base);
  // A private mount point of its own: the sandbox's directory is a shared mount, and unmounting the stage there
  // would take the bound copies' /dev along.
  if (!mounted(stages)) {
    await execOk(['mount', '--bind', stages, stages]);
    await execOk(['mount', '--make-private', stages]);
  }
  try {
    const overlay = overlayOptions({
      lower: o.layers,
      upper: path.join(changes, 'upper'),
      work: path.join(changes, 'work'),
      target: stage,
    });
    await execOk(['mount', '-t', 'overlay', '-o', `nosuid,nodev,${overlay}`, 'sandbox-kit-attached', stage]);
    const dev = plainDir(stage, 'dev', o.mapping.base);
    await execOk(['mount', '-t', 'tmpfs', '-o', 'nosuid,noexec,mode=755,size=64k', 'tmpfs', dev]);
    for (const d of CHROOT_DEVICES) {
      fs.writeFileSync(path.join(dev, d), '');
      await execOk(['mount', '--bind', '-o', 'nosuid,noexec', `/dev/${d}`, path.join(dev, d)]);
    }
    const proc = plainDir(stage, 'proc', o.mapping.base);
    await execOk(['mount', '-t', 'tmpfs', '-o', 'nosuid,noexec,nodev,mode=555,size=4k', 'tmpfs', proc]);
    fs.mkdirSync(rootfs, { recursive: true, mode: 0o755 });
    await execOk(['mount', '--rbind', stage, rootfs]);
  } finally {
    await exec(['umount', '-R', stage]);
    fs.rmSync(stage, { recursive: true, force: true });
  }
  await execOk(chrootProcArgv(o.pid, path.posix.join(o.attachDir, o.key, 'rootfs')), { timeoutMs: 15_000 });
}

/**
 * Unmounts every filesystem attached to the sandbox on the host's side (before its disk goes); with `remove`, also
 * what was attached and written beside it (a stopped sandbox starts again without them). Idempotent.
 */
export async function detachAll(bundle: string, o: { remove: boolean }): Promise<void> {
  const dir = attachedDir(bundle);
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  for (const name of names) {
    const rootfs = path.join(dir, name, 'rootfs');
    if (!fs.existsSync(rootfs)) continue;
    const r = await exec(['umount', '-R', rootfs]);
    if (r.code !== 0 && !/not mounted/.test(r.stderr)) await exec(['umount', '-R', '-l', rootfs]);
  }
  const stage = path.join(bundle, 'attach-stage');
  if (mounted(stage)) await exec(['umount', '-R', '-l', stage]);
  if (o.remove)
    for (const d of [path.join(dir, '.'), path.join(bundle, 'attached-changes'), stage])
      for (const name of fs.existsSync(d) ? fs.readdirSync(d) : []) fs.rmSync(path.join(d, name), { recursive: true, force: true });
}
