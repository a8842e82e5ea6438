/**
 * The mount points of a chroot directory's /dev and /proc (oci-config.ts, chrootMounts) as plain directories, made in
 * the sandbox's upper dir before the runtime starts it. An image's `dev` or `proc` may be a link (a hostile image
 * points them at host directories, or at the sandbox's /etc): crun resolves a mount's destination inside the root
 * and gVisor inside its own file system, so the host is safe either way, but the mounts would land where the link
 * points inside the sandbox, and the image server would get no /dev. A directory in the upper dir over a link in a
 * lower layer hides the link (overlayfs), so the runtime mounts exactly at `<dir>/dev` and `<dir>/proc`.
 *
 * Only what the host may touch safely is touched: nothing runs in the sandbox then, every step is checked with
 * lstat from the upper dir down and never goes through a link. A directory above the mount point that the
 * sandbox's own files made a link or a file in the upper dir (its root's choice, inside its own tree) is left as it
 * is; at the mount point itself such an entry is replaced. Directories made on the way copy the owner and mode of
 * the directory the lower layers show there, as overlayfs's copy-up does.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chrootDirProblem } from './chroot-proc';
import { resolveInLayers } from './layer-view';

/** The names below a chroot dir the runtime mounts on. */
const MOUNT_POINTS = ['dev', 'proc'] as const;

/**
 * Makes `<dir>/dev` and `<dir>/proc` of each chroot dir plain directories owned by `owner` (the sandbox's root) in
 * `upper` where the merged view of `layers` (topmost first) and `upper` shows anything else there.
 */
export function plainChrootMountPoints(upper: string, layers: readonly string[], dirs: readonly string[], owner: number): void {
  for (const dir of dirs) {
    const problem = chrootDirProblem(dir);
    if (problem) throw new Error(problem);
    const parts = dir.split('/').filter(Boolean);
    for (const name of MOUNT_POINTS) {
      const rel = [...parts, name].join('/');
      if (needsDirectory(upper, layers, rel)) makeInUpper(upper, layers, parts, name, owner);
    }
  }
}

/** Whether the merged view has something other than a directory at `rel` (absent: the runtime makes it). */
function needsDirectory(upper: string, layers: readonly string[], rel: string): boolean {
  const inUpper = fs.lstatSync(path.join(upper, rel), { throwIfNoEntry: false });
  if (inUpper !== undefined) return !inUpper.isDirectory();
  const below = resolveInLayers(layers, rel, false);
  return below !== undefined && !below.stat.isDirectory();
}

/** The directories of `parts` in `upper` (made as the lower layers show them), then `name` in them, plain. */
function makeInUpper(upper: string, layers: readonly string[], parts: string[], name: string, owner: number): void {
  let at = upper;
  for (let i = 0; i < parts.length; i++) {
    at = path.join(at, parts[i]!);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (st?.isDirectory()) continue;
    // The sandbox's own link or file, or none where the lower layers have no plain directory: not ours to change.
    if (st !== undefined) return;
    const below = resolveInLayers(layers, parts.slice(0, i + 1).join('/'), false);
    if (!below?.stat.isDirectory()) return;
    fs.mkdirSync(at, { mode: below.stat.mode & 0o7777 });
    fs.chownSync(at, below.stat.uid, below.stat.gid);
    fs.chmodSync(at, below.stat.mode & 0o7777);
  }
  const target = path.join(at, name);
  // A link or file of the sandbox's own in the upper dir at the mount point itself: removed (never followed).
  const st = fs.lstatSync(target, { throwIfNoEntry: false });
  if (st !== undefined && !st.isDirectory()) fs.rmSync(target, { force: true });
  fs.mkdirSync(target, { mode: 0o755 });
  fs.lchownSync(target, owner, owner);
}
