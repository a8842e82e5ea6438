/**
 * Layers owned right inside a user namespace. Every sandbox and build step maps uid/gid 0..size-1 inside to
 * base..base+size-1 on the host, so a layer's files must be owned by the shifted ids on disk (idmapped mounts would
 * avoid the copy, but this host's util-linux has no X-mount.idmap and the runtime CLIs cannot idmap an overlay's
 * lower dirs). A layer made by a build step in the user namespace is shifted already (the kernel writes the mapped
 * ids); a base root file system, or a layer made before, is copied once and shifted in one pass, and the copy is
 * cached beside it.
 *
 * chown clears setuid/setgid bits and file capabilities, so the pass restores the mode and rewrites a capability
 * xattr as a namespaced (v3) one whose root is the range's base: `ping` keeps CAP_NET_RAW inside.
 */
import { getAttributeSync, setAttributeSync } from '@napi-rs/xattr';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec, execOk } from '../util/exec';

export interface IdMapping {
  /** First host id; inside id 0 is this one. */
  base: number;
  /** How many ids are mapped (inside 0..size-1). */
  size: number;
}

/** The kit's default range: above the ids a host's own users and services take. */
export const DEFAULT_ID_MAPPING: IdMapping = { base: 100_000, size: 65_536 };

const CAPABILITY_XATTR = 'security.capability';
const VFS_CAP_REVISION_2 = 0x02000000;
const VFS_CAP_REVISION_3 = 0x03000000;
const VFS_CAP_REVISION_MASK = 0xff000000;

/** A file capability xattr rewritten for a namespace whose root is host uid `rootid` (v2 or v3 in, v3 out). */
export function namespacedCapability(value: Buffer, rootid: number): Buffer | undefined {
  if (value.length < 20) return undefined;
  const magic = value.readUInt32LE(0);
  const revision = (magic & VFS_CAP_REVISION_MASK) >>> 0;
  if (revision !== VFS_CAP_REVISION_2 && revision !== VFS_CAP_REVISION_3) return undefined;
  const out = Buffer.alloc(24);
  value.copy(out, 0, 0, 20);
  out.writeUInt32LE(((magic & ~VFS_CAP_REVISION_MASK) | VFS_CAP_REVISION_3) >>> 0, 0);
  out.writeUInt32LE(rootid, 20);
  return out;
}

/** The host id of inside id `id`; ids at or above the base are taken as shifted already. */
export function shiftedId(id: number, m: IdMapping): number {
  if (id >= m.base) return id;
  if (id >= m.size) throw new Error(`id ${id} is outside the mapped range 0..${m.size - 1}`);
  return id + m.base;
}

/** Shifts every entry under `dir` (the dir included) into the range, in place. Returns how many it changed. */
export function shiftTree(dir: string, m: IdMapping): number {
  let changed = 0;
  const visit = (p: string, st: fs.Stats) => {
    const uid = shiftedId(st.uid, m);
    const gid = shiftedId(st.gid, m);
    if (uid === st.uid && gid === st.gid) return;
    const capability = st.isFile() ? getAttributeSync(p, CAPABILITY_XATTR) : null;
    fs.lchownSync(p, uid, gid);
    if (!st.isSymbolicLink() && (st.mode & 0o7000) !== 0) fs.chmodSync(p, st.mode & 0o7777);
    if (capability) {
      const v3 = namespacedCapability(capability, m.base);
      if (v3) setAttributeSync(p, CAPABILITY_XATTR, v3);
    }
    changed++;
  };
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      visit(p, st);
      if (st.isDirectory()) walk(p);
    }
  };
  visit(dir, fs.lstatSync(dir));
  walk(dir);
  return changed;
}

/** Whether a layer is in the range already: its root directory is (a step's layer, a shifted copy). */
export function isShifted(layer: string, m: IdMapping): boolean {
  return fs.statSync(layer).uid >= m.base;
}

/**
 * Where the shifted copy of `layer` is cached: beside it (a base image is read-only to us), named by the range and by
 * the layer directory's identity: its path, inode, birth and modification times. A layer made again in its place
 * (a new directory renamed there) gets a new copy. Not its change time: tools that only read a tree move it (umoci
 * insert of a base image touches every directory's times), and each move used to leave a whole copy behind.
 */
export function shiftedCopyPath(layer: string, m: IdMapping): string {
  const real = fs.realpathSync(layer);
  const st = fs.statSync(real);
  const key = createHash('sha256').update(`${real}\0${st.ino}\0${st.birthtimeMs}\0${st.mtimeMs}`).digest('hex').slice(0, 12);
  return `${real}.ids-${m.base}-${m.size}-${key}`;
}

/**
 * The layer as the user namespace needs it: itself when shifted already, else its cached shifted copy (made the
 * first time: `cp -a` into a temporary dir, shifted, renamed into place, under a lock so concurrent creates wait).
 */
export async function shiftedLayer(layer: string, m: IdMapping, onLine?: (line: string) => void): Promise<string> {
  if (isShifted(layer, m)) return layer;
  const target = shiftedCopyPath(layer, m);
  if (fs.existsSync(target)) return target;
  const lock = `${target}.lock`;
  const tmp = `${target}.tmp-${process.pid}`;
  const script = ['set -e', '[ -e "$1" ] && exit 0', 'rm -rf "$2"', 'cp -a --reflink=auto "$3" "$2"'].join('\n');
  onLine?.(`shifting ${layer} into ids ${m.base}..${m.base + m.size - 1} (once)`);
  await execOk(['flock', lock, 'sh', '-c', script, 'sh', target, tmp, layer], { timeoutMs: 15 * 60_000 });
  if (fs.existsSync(tmp)) {
    shiftTree(tmp, m);
    const r = await exec(['flock', lock, 'sh', '-c', '[ -e "$1" ] || mv -T "$2" "$1"; rm -rf "$2"', 'sh', target, tmp]);
    if (r.code !== 0) throw new Error(`cannot place the shifted copy of ${layer}: ${r.stderr.trim()}`);
  }
  return target;
}
