/** Finds the built entry points the lab runs inside namespaces (supervisor, what-is-my-IP), from src or from dist. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the project root above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

/** Path of dist/src/lab/<name>.js; fails with the fix when the project has not been built. */
export function labScript(name: 'supervisor' | 'whoami'): string {
  const path = join(projectRoot(), 'dist', 'src', 'lab', `${name}.js`);
  if (!existsSync(path)) throw new Error(`${path} not found: run 'npm run build' first (the lab runs the built files inside its namespaces)`);
  return path;
}
