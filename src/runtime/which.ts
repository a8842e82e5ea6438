/** Finds a program on PATH without spawning anything. */
import * as fs from 'node:fs';
import * as path from 'node:path';

export function findExecutable(name: string, searchPath = process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : searchPath
        .split(':')
        .filter(Boolean)
        .map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
