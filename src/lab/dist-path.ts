/** Finds built entry points that run as their own processes (inside namespaces or not), from src or from dist. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../util/project-root';

/** Path of dist/src/<relative>.js, built or not. */
export function builtEntryPath(relative: string): string {
  return join(projectRoot(), 'dist', 'src', `${relative}.js`);
}

/** Path of dist/src/<relative>.js; fails with the fix when the project has not been built. */
export function builtEntry(relative: string): string {
  const path = builtEntryPath(relative);
  if (!existsSync(path)) throw new Error(`${path} not found: run 'npm run build' first (these processes run the built files)`);
  return path;
}

/** Path of dist/src/lab/<name>.js. */
export function labScript(name: 'supervisor' | 'whoami'): string {
  return builtEntry(`lab/${name}`);
}
