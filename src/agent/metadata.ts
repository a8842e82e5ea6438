/**
 * `metadata`: the extended attributes under `user.<brand lower>.`, prefix stripped (spec 2.1). Plain `user.*`
 * attributes of other tools are not shown; a key or value that is not valid UTF-8 is skipped (a JSON map has
 * only text). Symlinks show their target's attributes (Linux allows no user.* attributes on a symlink itself).
 *
 * The fast path is @napi-rs/xattr, which takes UTF-8 path strings and fails the whole listing when one attribute
 * name is not UTF-8. For those two rare cases (a path that is not UTF-8, an attribute name that is not) the
 * agent opens the file and hands it to GNU getfattr (package `attr`) as its stdin, named /dev/stdin; without
 * getfattr such a file shows no metadata.
 */
import { spawnSync } from 'node:child_process';
import { isUtf8 } from 'node:buffer';
import * as fs from 'node:fs';
import { getAttributeSync, listAttributesSync } from '@napi-rs/xattr';

export type Metadata = Array<[string, string]>;

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/**
 * Metadata of the file at `target` (already resolved when the entry is a symlink). Never throws. `openable`
 * says the target is a regular file or a directory, which the slow path may open (never a device or a FIFO).
 */
export function readMetadata(target: Buffer, prefix: string, openable: boolean): Metadata {
  if (isUtf8(target)) {
    const text = target.toString('utf8');
    let names: string[];
    try {
      names = listAttributesSync(text);
    } catch (err) {
      if ((err as { code?: string }).code === 'InvalidArg' && openable) return viaGetfattr(target, prefix);
      return []; // ENOENT (vanished), ENOTSUP (no xattrs on this filesystem), EACCES: no metadata
    }
    const out: Metadata = [];
    for (const name of names) {
      if (!name.startsWith(prefix) || name.length === prefix.length) continue;
      let value: Buffer | null;
      try {
        value = getAttributeSync(text, name);
      } catch {
        continue;
      }
      if (value && isUtf8(value)) out.push([name.slice(prefix.length), value.toString('utf8')]);
    }
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
  return openable ? viaGetfattr(target, prefix) : [];
}

let getfattrMissing = false;

function viaGetfattr(target: Buffer, prefix: string): Metadata {
  if (getfattrMissing) return [];
  let fd: number;
  try {
    fd = fs.openSync(target, OPEN_FLAGS);
  } catch {
    return [];
  }
  try {
    const pattern = `^${prefix.replace(/\./g, '\\.')}`;
    // The open file is getfattr's stdin: /dev/stdin names it in ASCII, whatever its path and our dumpable flag.
    const r = spawnSync('getfattr', ['--absolute-names', '-d', '-e', 'hex', '-m', pattern, '/dev/stdin'], {
      stdio: [fd, 'pipe', 'pipe'],
      encoding: 'latin1',
      timeout: 5000,
    });
    if (r.error) {
      if ((r.error as NodeJS.ErrnoException).code === 'ENOENT') getfattrMissing = true;
      return [];
    }
    return parseGetfattrHex(r.stdout, prefix);
  } finally {
    fs.closeSync(fd);
  }
}

/** Parses `getfattr -d -e hex` output (read as latin1, one char per byte); octal escapes in names are bytes. */
export function parseGetfattrHex(output: string, prefix: string): Metadata {
  const out: Metadata = [];
  for (const line of output.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    const rawName = eq === -1 ? line : line.slice(0, eq);
    const rawValue = eq === -1 ? '' : line.slice(eq + 1);
    const nameBytes = Buffer.from(rawName.replace(/\\(\\|[0-7]{3})/g, (_m, e: string) => (e === '\\' ? '\\' : String.fromCharCode(parseInt(e, 8)))), 'latin1');
    if (!isUtf8(nameBytes)) continue;
    const name = nameBytes.toString('utf8');
    if (!name.startsWith(prefix) || name.length === prefix.length) continue;
    let value: Buffer;
    if (rawValue.startsWith('0x')) value = Buffer.from(rawValue.slice(2), 'hex');
    else if (rawValue === '' || rawValue === '""') value = Buffer.alloc(0);
    else continue;
    if (!isUtf8(value)) continue;
    out.push([name.slice(prefix.length), value.toString('utf8')]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
