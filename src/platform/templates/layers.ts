/**
 * Reading the merged view of a stack of overlay layers from the host, without mounting: the topmost layer holding a
 * path wins. Whiteouts (character devices 0/0) hide a path, as overlayfs does.
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';

async function find(layers: string[], path: string): Promise<string | undefined> {
  for (const layer of layers) {
    const candidate = join(layer, path);
    const st = await lstat(candidate).catch(() => undefined);
    if (!st) continue;
    if (st.isCharacterDevice() && st.rdev === 0) return undefined;
    return candidate;
  }
  return undefined;
}

export async function pathExists(layers: string[], path: string): Promise<boolean> {
  return (await find(layers, path)) !== undefined;
}

/** Whether /etc/passwd of the merged root names `user`. */
export async function userExists(layers: string[], user: string): Promise<boolean> {
  const passwd = await find(layers, 'etc/passwd');
  if (!passwd) return false;
  const text = await readFile(passwd, 'utf8');
  return text.split('\n').some((line) => line.split(':')[0] === user);
}

/** The home directory of `user` in the merged root, from /etc/passwd. */
export async function homeOf(layers: string[], user: string): Promise<string | undefined> {
  const passwd = await find(layers, 'etc/passwd');
  if (!passwd) return undefined;
  const text = await readFile(passwd, 'utf8');
  const line = text.split('\n').find((l) => l.split(':')[0] === user);
  return line?.split(':')[5];
}
