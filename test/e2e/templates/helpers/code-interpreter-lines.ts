/**
 * The `@e2b/code-interpreter` releases the templates test runs besides the newest, each the unmodified npm package
 * under an alias in package.json, with the `e2b` release it is installed with there (overrides pin each to one of
 * the e2b lines of the SDK compatibility matrix; 1.5 brings its own 1.x), and how each reaches the Jupyter server:
 * up to 2.6 only by the host form `https://49999-{sandboxID}.{domain}`, whatever E2B_SANDBOX_URL says, so they need
 * the E2B_DOMAIN form; from 2.7 on through E2B_SANDBOX_URL with the routing headers.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface CodeInterpreterLine {
  /** The package name in node_modules. */
  pkg: string;
  version: string;
  /** The e2b release it runs on. */
  e2b: string;
  connection: 'domain' | 'urls';
}

const ROOT = join(__dirname, '..', '..', '..', '..');
const manifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { version: string };

function line(pkg: string, connection: CodeInterpreterLine['connection']): CodeInterpreterLine {
  const own = join(ROOT, 'node_modules', pkg, 'package.json');
  const nested = join(dirname(own), 'node_modules', 'e2b', 'package.json');
  let e2b: string;
  try {
    e2b = manifest(nested).version;
  } catch {
    e2b = manifest(join(ROOT, 'node_modules', 'e2b', 'package.json')).version;
  }
  return { pkg, version: manifest(own).version, e2b, connection };
}

export const CODE_INTERPRETER_LINES: readonly CodeInterpreterLine[] = [
  line('code-interpreter-1-5', 'domain'),
  line('code-interpreter-2-0', 'domain'),
  line('code-interpreter-2-3', 'domain'),
  line('code-interpreter-2-6', 'domain'),
  line('code-interpreter-2-7', 'urls'),
];
