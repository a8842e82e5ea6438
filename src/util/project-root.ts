import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The directory of the kit's package.json above the running code (src, dist, or a bundle beside it). */
export function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the project root above ${__dirname}`);
    dir = parent;
  }
  return dir;
}
