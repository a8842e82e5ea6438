/**
 * Writes the config reference from the stack schema: docs/config.md whole, and the table section of README.md.
 * With --check it writes nothing and exits 1 when either is out of date.
 * Run after a build: node dist/scripts/config-reference.js [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { renderConfigReference, withConfigTable } from '../src/config/reference';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // Missing counts as out of date.
  }
}

const targets: { path: string; expected: string }[] = [
  { path: 'docs/config.md', expected: renderConfigReference() },
  { path: 'README.md', expected: withConfigTable(read('README.md')) },
];

for (const { path, expected } of targets) {
  const current = read(path);
  if (values.check) {
    if (current !== expected) {
      console.error(`${path} is out of date with src/config/schema.ts; regenerate it: npm run docs:config`);
      process.exitCode = 1;
    } else {
      console.log(`${path} is up to date`);
    }
  } else if (current !== expected) {
    writeFileSync(path, expected);
    console.log(`wrote ${path}`);
  }
}
