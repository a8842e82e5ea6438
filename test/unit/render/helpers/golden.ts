import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const GOLDEN_DIR = join(__dirname, '..', 'golden');

/**
 * Compares rendered text with test/unit/render/golden/<name>. With UPDATE_GOLDEN=1 the file is (re)written instead:
 * review the diff by eye before committing it.
 */
export function expectGolden(name: string, actual: string): void {
  const path = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(path, actual);
    return;
  }
  let expected: string;
  try {
    expected = readFileSync(path, 'utf8');
  } catch {
    throw new Error(`golden file ${path} is missing; create it with UPDATE_GOLDEN=1 and review it`);
  }
  expect(actual).toBe(expected);
}
