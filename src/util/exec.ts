/**
 * Running host tools (the OCI CLI, ip, iptables, mount, mmdebstrap) with a deadline: the runtime and the lab both
 * use it. A command starts in this process (exec-here.ts) unless the process has asked for a spawn helper
 * (useSpawnHelper: the platform does), which then starts it instead (spawn-helper.ts); the result is the same.
 */
import { existsSync } from 'node:fs';
import { type ExecOptions, type ExecResult, execHere } from './exec-here';
import { defaultSpawnHelperProgram, SpawnHelper } from './spawn-helper';

export type { ExecOptions, ExecResult } from './exec-here';

let shared: { helper: SpawnHelper; users: number } | undefined;

export function exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  return shared ? shared.helper.run(argv, options) : execHere(argv, options);
}

/** Runs a command that must succeed; the error names the command and carries its stderr. */
export async function execOk(argv: readonly string[], options: ExecOptions = {}): Promise<string> {
  const result = await exec(argv, options);
  if (result.code !== 0) {
    throw new Error(`command failed (exit ${result.code}): ${argv.join(' ')}: ${result.stderr.trim() || result.stdout.trim()}`);
  }
  return result.stdout;
}

/**
 * From now until the answered release is called (by every caller that asked), this process's commands start in one
 * shared spawn helper. Answers undefined, and commands keep starting here, when the helper's program is not built.
 * The release resolves once the helper has exited.
 */
export function useSpawnHelper(program = defaultSpawnHelperProgram()): (() => Promise<void>) | undefined {
  if (!shared) {
    if (!existsSync(program)) return undefined;
    shared = { helper: new SpawnHelper(program), users: 0 };
  }
  const use = shared;
  use.users++;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    use.users--;
    if (use.users > 0) return;
    if (shared === use) shared = undefined;
    await use.helper.close();
  };
}
