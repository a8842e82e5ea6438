/**
 * A sandbox's filesystem changes are its overlay upper dir. Pause to disk keeps them, snapshots and forks copy them.
 * The copy is `cp -a` (reflinks where the filesystem has them): it keeps owners as numbers (also the shifted IDs of a
 * user-namespaced sandbox), modes, xattrs (overlay's opaque-dir marks) and the whiteout device nodes overlay uses
 * for deleted files, so a copy is a valid upper dir and a valid read-only layer.
 */
import * as fs from 'node:fs';
import { exec } from '../util/exec';

/** Copies the directory `source` to `target`, which must not exist yet; nothing is left at `target` on failure. */
export async function copyChanges(source: string, target: string): Promise<void> {
  if (!fs.statSync(source, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`no filesystem changes at ${source}`);
  if (fs.existsSync(target)) throw new Error(`cannot copy filesystem changes to ${target}: it already exists`);
  const r = await exec(['cp', '-a', '--reflink=auto', '--', source, target], { timeoutMs: 10 * 60_000 });
  if (r.code !== 0) {
    fs.rmSync(target, { recursive: true, force: true });
    throw new Error(`copying filesystem changes failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`);
  }
}
