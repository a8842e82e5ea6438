/**
 * Directories made on a user's behalf belong to that user (the agent runs as root): `mkdir -p`, chowning exactly
 * the directories it created. Paths are bytes (handled as latin1 strings, one char per byte).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UserAccount } from '../accounts';

/** Creates `dir` and missing parents owned by `user`; returns whether `dir` itself was created. */
export function makeDirsAs(dir: Buffer, user: UserAccount): boolean {
  const missing: Buffer[] = [];
  let p = dir.toString('latin1');
  while (!fs.existsSync(Buffer.from(p, 'latin1'))) {
    missing.unshift(Buffer.from(p, 'latin1'));
    const up = path.posix.dirname(p);
    if (up === p) break;
    p = up;
  }
  for (const m of missing) {
    try {
      fs.mkdirSync(m, { mode: 0o755 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      continue;
    }
    fs.chownSync(m, user.uid, user.gid);
  }
  return missing.length > 0 && missing[missing.length - 1]!.equals(dir);
}

/** The parent directory of a byte path. */
export function parentOf(p: Buffer): Buffer {
  return Buffer.from(path.posix.dirname(p.toString('latin1')), 'latin1');
}
