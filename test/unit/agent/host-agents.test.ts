/**
 * Every agent a test runs on the host starts through one spawner (test/integration/agent/helpers/common.ts spawnAgent),
 * which puts the host's shell profiles behind a tripwire (test/helpers/host-shell-tripwire.ts). An agent started
 * inside the test runner's own process would run its commands with the host's profiles in reach, so no test may.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const TEST_ROOT = path.resolve(__dirname, '../..');
const SPAWNER = path.join(TEST_ROOT, 'integration/agent/helpers/common.ts');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.(ts|mjs|js)$/.test(e.name) ? [full] : [];
  });
}

/** Names a test file may not use: the agent's in-process entry points. */
function inProcessAgentStarts(text: string): string[] {
  return [...text.matchAll(/\b(startAgent|runAgentCli)\s*[(,}]/g)].map((m) => m[1]!);
}

test('the check sees an in-process start', () => {
  expect(inProcessAgentStarts("import { startAgent } from '../src/agent';\nawait startAgent({ port: 0 });")).toEqual([
    'startAgent',
    'startAgent',
  ]);
  expect(inProcessAgentStarts('await startHostAgent({ defaultUser: "root" });')).toEqual([]);
});

test('no test starts the agent in the test runner process', () => {
  const offenders = sources(TEST_ROOT)
    .filter((f) => f !== SPAWNER && f !== __filename)
    .filter((f) => inProcessAgentStarts(fs.readFileSync(f, 'utf8')).length > 0)
    .map((f) => path.relative(TEST_ROOT, f));
  expect(offenders).toEqual([]);
});
