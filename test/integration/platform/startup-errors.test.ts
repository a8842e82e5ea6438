/**
 * `sandbox-kit platform` refuses to start with a clear message, and leaves nothing running, when its runtime binary
 * is missing or a flag is wrong. No root needed: it stops before anything is made on the host.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleForNode } from '../../helpers/node-bundle';
import { CLI_SOURCE } from '../../helpers/cli';

const ROOT = join(__dirname, '..', '..', '..');
const CLI = join(ROOT, 'dist', 'test-platform', 'cli-startup.js');

let stateDir: string;

beforeAll(async () => {
  bundleForNode(CLI_SOURCE, CLI);
  stateDir = await mkdtemp(join(tmpdir(), 'skp-'));
});

afterAll(() => fs.rmSync(stateDir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'platform', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

test('a missing runtime binary: exit 1 naming the runtime and the package, nothing started', async () => {
  for (const runtime of ['crun', 'runc', 'auto']) {
    const r = await cli(['--state-dir', stateDir, '--runtime', runtime], { PATH: '/nonexistent' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OCI runtime (crun|runc) not found at PATH \(\/nonexistent\): install the Debian package (crun|runc)/);
    expect(r.stdout).toBe('');
  }
  // Nothing but the instance name was made: no Redis, no key file, no runtime data.
  expect(fs.readdirSync(stateDir)).toEqual(['instance']);
});

test('bad flags: exit 2 naming each flag, what was given and what is accepted', async () => {
  const r = await cli(['--runtime', 'podman', '--port', '70000', '--catalog', 'file:/x']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--runtime: got "podman"; expected one of crun, runc, runsc, auto');
  expect(r.stderr).toContain('--port: got "70000"');
  expect(r.stderr).toContain('--catalog: got "file:/x"; expected memory or redis://HOST:PORT[/DB]');
});
