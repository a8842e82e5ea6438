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

/**
 * dist/bundle of the project or release root: the bundled programs (the agent, the egress relay, the spawn helper)
 * and the built native programs beside them.
 */
export function bundleDir(): string {
  return join(projectRoot(), 'dist', 'bundle');
}
