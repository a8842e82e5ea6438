import { chmodSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACT_NAMES, type Artifact } from '../render';

/**
 * Writes rendered artifacts into a directory. A new directory is created 0700 (it will hold the password). In an existing
 * one only our own file names are touched: each file is written to a temporary name with its final mode already set and
 * renamed into place, so a secret is never readable under a looser mode, not even for a moment, and a symlink planted
 * at one of our names is replaced rather than followed. Our files this render does not produce (egress-address.sh
 * without an egress address) are removed, so the directory never mixes two renders.
 */
export function writeArtifacts(dir: string, artifacts: readonly Artifact[]): void {
  let exists = true;
  try {
    if (!statSync(dir).isDirectory()) throw new Error(`output path ${dir} exists and is not a directory`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    exists = false;
  }
  if (!exists) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700); // mkdir's mode is filtered by the umask
  }
  for (const artifact of artifacts) {
    const target = join(dir, artifact.name);
    const temporary = join(dir, `.${artifact.name}.${process.pid}.tmp`);
    try {
      writeFileSync(temporary, artifact.content, { mode: artifact.mode, flag: 'wx' });
      chmodSync(temporary, artifact.mode);
      renameSync(temporary, target);
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  const written = new Set(artifacts.map((a) => a.name));
  for (const name of ARTIFACT_NAMES) {
    if (!written.has(name)) rmSync(join(dir, name), { force: true });
  }
}
