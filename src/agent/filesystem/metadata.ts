/**
 * `metadata`: the extended attributes under `user.<brand lower>.`, prefix stripped. Plain `user.*` attributes of
 * other tools are not shown; a key or value that is not valid UTF-8 is skipped (a JSON map has only text).
 * Symlinks show their target's attributes (Linux allows no user.* attributes on a symlink itself).
 *
 * The addon (@napi-rs/xattr) takes UTF-8 path strings and does not follow symlinks (so /proc/self/fd/N cannot
 * stand in for a path). A path that is not UTF-8 therefore shows no metadata, and so does a file with an attribute
 * name that is not UTF-8 (the addon cannot list its names). Every read is a plain syscall: a listing never waits
 * on a helper process, and never blocks other calls for longer than its slice.
 */
import { isUtf8 } from 'node:buffer';
import { getAttributeSync, listAttributesSync } from '@napi-rs/xattr';

export type Metadata = ReadonlyArray<readonly [string, string]>;

const NONE: Metadata = [];

/**
 * Metadata of the file at `p` (already resolved when the entry is a symlink), a path as node:fs takes it: an ASCII
 * string stands for itself (binary-path.ts), anything else is its bytes. Never throws.
 */
export function readMetadata(p: string | Buffer, prefix: string): Metadata {
  if (typeof p === 'string') return readByName(p, prefix);
  return isUtf8(p) ? readByName(p.toString('utf8'), prefix) : NONE;
}

function readByName(p: string, prefix: string): Metadata {
  let names: string[];
  try {
    names = listAttributesSync(p);
  } catch {
    return NONE; // vanished, no xattrs on this filesystem, or a name that is not UTF-8
  }
  if (names.length === 0) return NONE;
  const out: Array<[string, string]> = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || name.length === prefix.length) continue;
    let value: Buffer | null;
    try {
      value = getAttributeSync(p, name);
    } catch {
      continue;
    }
    if (value && isUtf8(value)) out.push([name.slice(prefix.length), value.toString('utf8')]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
