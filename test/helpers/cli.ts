/** Where the tests find the `sandbox-kit` command: built (what a user runs), or its source for a bundled child. */
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
/** The built CLI; npm test builds before jest runs. */
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** The CLI's source, for the tests that bundle it into a Node child (test/helpers/node-script.ts). */
export const CLI_SOURCE = join(ROOT, 'src', 'cli', 'main.ts');
