import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../../../helpers/cli';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `sandbox-kit ...` in `cwd` with a clean password variable unless one is given. */
export function sandboxKit(cwd: string, args: string[], env: Record<string, string> = {}): CliResult {
  const base = { ...process.env };
  delete base.SANDBOX_KIT_PROXY_PASSWORD;
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...base, ...env }, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A throwaway project directory: Pulumi.yaml plus the given stack files. */
export function makeProject(stacks: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skt-cli-'));
  writeFileSync(join(dir, 'Pulumi.yaml'), 'name: sandbox-kit\nruntime: nodejs\nmain: infra/\n');
  for (const [stack, text] of Object.entries(stacks)) writeFileSync(join(dir, `Pulumi.${stack}.yaml`), text);
  return dir;
}
