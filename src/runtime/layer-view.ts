/**
 * The merged view of a stack of overlay layers, read from the host without mounting, as the container will see it:
 * the topmost layer holding a path wins, whiteouts (character devices 0/0) hide it, an opaque directory
 * (trusted.overlay.opaque=y) hides what the layers below hold under it. Symlinks are resolved inside the stack, as
 * the container's kernel would resolve them in its root (an absolute target starts again at the stack's root, `..`
 * stops there): a layer's symlink never leads to a host path, and every host path this module opens has only real
 * directories of a layer above it. A file is read only when it is a regular file, with O_NOFOLLOW, and only so much.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getAttributeSync } from '@napi-rs/xattr';

/** Symlinks followed in one lookup before it gives up (the kernel's limit). */
const MAX_LINKS = 40;

export interface LayerHit {
  /** The host path of the entry in the layer that provides it. */
  hostPath: string;
  stat: fs.Stats;
}

function isWhiteout(st: fs.Stats): boolean {
  return st.isCharacterDevice() && st.rdev === 0;
}

function isOpaque(dir: string): boolean {
  try {
    return getAttributeSync(dir, 'trusted.overlay.opaque')?.toString() === 'y';
  } catch {
    return false;
  }
}

/**
 * One name inside a merged directory (given as the host directories that make it, topmost first): the entry the
 * container sees, and, when it is a directory, the host directories that make it in turn.
 */
function lookup(dirs: string[], name: string): { hit: LayerHit; dirs: string[] } | undefined {
  let hit: LayerHit | undefined;
  const below: string[] = [];
  for (const dir of dirs) {
    const hostPath = path.join(dir, name);
    const st = fs.lstatSync(hostPath, { throwIfNoEntry: false });
    if (!st) continue;
    if (isWhiteout(st)) break;
    if (!st.isDirectory()) {
      if (!hit) hit = { hostPath, stat: st };
      break; // a file hides what is below it, and a directory above hides a file below
    }
    hit ??= { hostPath, stat: st };
    below.push(hostPath);
    if (isOpaque(hostPath)) break;
  }
  return hit ? { hit, dirs: below } : undefined;
}

/**
 * Resolves `target` (absolute, or relative to the stack's root) in the merged view of `layers` (topmost first),
 * following symlinks inside the stack; with `followLast` false a final symlink is answered itself. Undefined when
 * the path does not exist there, or a lookup meets more than 40 symlinks.
 */
export function resolveInLayers(layers: readonly string[], target: string, followLast = true): LayerHit | undefined {
  let links = 0;
  const root = { hit: undefined as LayerHit | undefined, dirs: [...layers] };
  // The directories walked so far: each one's host directories; the last is where the next name is looked up.
  let stack: Array<{ dirs: string[]; hit?: LayerHit }> = [root];
  const pending = target.split('/').filter((p) => p !== '' && p !== '.');
  if (pending.length === 0) {
    const top = layers.find((l) => fs.lstatSync(l, { throwIfNoEntry: false })?.isDirectory());
    return top ? { hostPath: top, stat: fs.lstatSync(top) } : undefined;
  }
  let last: LayerHit | undefined;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '..') {
      if (stack.length > 1) stack.pop();
      last = stack.at(-1)!.hit;
      continue;
    }
    const found = lookup(stack.at(-1)!.dirs, name);
    if (!found) return undefined;
    const { hit } = found;
    if (hit.stat.isSymbolicLink() && (pending.length > 0 || followLast)) {
      links += 1;
      if (links > MAX_LINKS) return undefined;
      const link = fs.readlinkSync(hit.hostPath);
      if (link.startsWith('/')) stack = [root];
      pending.unshift(...link.split('/').filter((p) => p !== '' && p !== '.'));
      last = stack.at(-1)!.hit;
      continue;
    }
    if (pending.length > 0 && !hit.stat.isDirectory()) return undefined; // ENOTDIR
    stack.push({ dirs: found.dirs, hit });
    last = hit;
  }
  if (!last) {
    const top = layers.find((l) => fs.lstatSync(l, { throwIfNoEntry: false })?.isDirectory());
    return top ? { hostPath: top, stat: fs.lstatSync(top) } : undefined;
  }
  return last;
}

/** Whether `target` exists in the merged view (a final symlink counts as existing, dangling or not). */
export function existsInLayers(layers: readonly string[], target: string): boolean {
  return resolveInLayers(layers, target, false) !== undefined;
}

/**
 * A regular file of the merged view, read as the container would read it (symlinks resolved inside the stack), at
 * most `maxBytes` of it; undefined when it is missing or not a regular file.
 */
export function readInLayers(layers: readonly string[], target: string, maxBytes = 4 * 1024 * 1024): string | undefined {
  const hit = resolveInLayers(layers, target);
  if (!hit?.stat.isFile()) return undefined;
  const fd = fs.openSync(hit.hostPath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether every directory above `rel` inside `root` is a real directory (no symlink): `root/rel` is then inside it. */
export function insideTree(root: string, rel: string): boolean {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return false;
  for (let i = 1; i < parts.length; i++) {
    const st = fs.lstatSync(path.join(root, ...parts.slice(0, i)), { throwIfNoEntry: false });
    if (!st?.isDirectory()) return false;
  }
  return true;
}
