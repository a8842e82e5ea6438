/**
 * What an upload leaves for watches to tell apart. An upload lands by renaming a complete temporary file onto its
 * destination (so a broken upload never leaves half a file): watches hide the temporary file, and report the
 * destination an upload has just replaced as a WRITE, as for a file rewritten in place (inotify alone sees a new
 * file moved in).
 */
import { nodeCrypto } from '../../util/node-crypto';

const TEMP_NAME = /^\.[0-9a-f]{12}\.upload$/;

/** The name of an upload's temporary file, in the destination's directory. */
export function uploadTempName(): string {
  return `.${nodeCrypto().randomBytes(6).toString('hex')}.upload`;
}

export function isUploadTemp(name: string): boolean {
  return TEMP_NAME.test(name.slice(name.lastIndexOf('/') + 1));
}

const REMEMBER_MS = 5_000;
const replaced = new Map<string, number>();
export function noteReplaced(path: string): void {
  const now = Date.now();
  for (const [p, at] of replaced) if (now - at > REMEMBER_MS) replaced.delete(p);
  replaced.set(path, now);
}

export function wasJustReplaced(path: string): boolean {
  const at = replaced.get(path);
  return at !== undefined && Date.now() - at <= REMEMBER_MS;
}
