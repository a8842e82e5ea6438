/**
 * Writes docs/config.md from the stack schema, or with --check exits 1 when the file is out of date.
 * Run after a build: node dist/scripts/config-reference.js [--check] [--out FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { renderConfigReference } from '../src/config/reference';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, out: { type: 'string', default: 'docs/config.md' } } });
const out = values.out;
const expected = renderConfigReference();

if (values.check) {
  let current = '';
  try {
    current = readFileSync(out, 'utf8');
  } catch {
    // Missing counts as out of date.
  }
  if (current !== expected) {
    console.error(`${out} is out of date with src/config/schema.ts; regenerate it: node dist/scripts/config-reference.js`);
    process.exitCode = 1;
  } else {
    console.log(`${out} is up to date`);
  }
} else {
  writeFileSync(out, expected);
  console.log(`wrote ${out}`);
}
