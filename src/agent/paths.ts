/**
 * Request paths -> absolute byte paths. Relative paths and `~` resolve against the request user's home;
 * `~` alone or `~/...` only (`~name` is an ordinary relative name). The result is lexically cleaned (`.`, `..`,
 * repeated and trailing slashes), like Go's filepath.Clean, before any symlink is looked at.
 *
 * Byte paths are handled as latin1 strings (one char per byte), so node:path's POSIX functions work on names
 * that are not UTF-8.
 */
import * as path from 'node:path';
import { textToBytes } from './bytes-text';
import { AgentError } from './errors';
import { Code } from '../contract/connect-codes';

export function resolveRequestPath(requested: string, home: string): Buffer {
  const bytes = textToBytes(requested);
  if (!Buffer.isBuffer(bytes)) throw new AgentError(Code.InvalidArgument, `field "path": ${bytes.error}`);
  let p = bytes.toString('latin1');
  const homeBin = Buffer.from(home, 'utf8').toString('latin1');
  if (p === '~' || p.startsWith('~/')) p = homeBin + p.slice(1);
  return Buffer.from(path.posix.resolve(homeBin, p), 'latin1');
}

/** The last component of an absolute byte path (`/` for the root itself, as Go's FileInfo.Name() gives). */
export function baseName(p: Buffer): Buffer {
  if (p.length === 1) return p;
  return p.subarray(p.lastIndexOf(0x2f) + 1);
}

/** A symlink's target text made absolute against the link's directory, lexically (for links that do not resolve). */
export function lexicalTarget(link: Buffer, target: Buffer): Buffer {
  const dir = path.posix.dirname(link.toString('latin1'));
  return Buffer.from(path.posix.resolve(dir, target.toString('latin1')), 'latin1');
}
