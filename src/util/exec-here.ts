/**
 * Running one host command from this process: its output collected (or appended to a file), a deadline, an abort.
 * exec.ts decides whether a command runs here or in the spawn helper (spawn-helper.ts); the helper runs it with this.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  input?: string;
  /** Kill the command after this long (default 30 s); a killed command resolves with code 124. */
  timeoutMs?: number;
  /** The command's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Kills the command when aborted; it resolves with code 130. */
  signal?: AbortSignal;
  /**
   * Append the command's stdout and stderr to this file (made with mode 0600 if missing) instead of collecting them;
   * its own children keep writing there after it ends (a runtime's detached container). Its stdin is then /dev/null
   * unless `input` is given.
   */
  outputFile?: string;
}

/** Exit code of a command that could not be started (not found, not executable, the output file not writable). */
export const NOT_STARTED = 127;
/** Exit code of a command killed at its deadline. */
export const TIMED_OUT = 124;
/** Exit code of a command killed by its abort signal. */
export const ABORTED = 130;

export function execHere(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    let outputFd: number | undefined;
    if (options.outputFile !== undefined) {
      try {
        outputFd = fs.openSync(options.outputFile, 'a', 0o600);
      } catch (err) {
        resolve({ code: NOT_STARTED, stdout: '', stderr: `${options.outputFile}: ${(err as Error).message}\n` });
        return;
      }
    }
    const output = outputFd ?? 'pipe';
    const input = outputFd !== undefined && options.input === undefined ? 'ignore' : 'pipe';
    const child = spawn(argv[0]!, argv.slice(1), { stdio: [input, output, output], env: options.env ?? process.env });
    if (outputFd !== undefined) fs.closeSync(outputFd);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    const onAbort = () => {
      aborted = true;
      child.kill('SIGKILL');
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ code: NOT_STARTED, stdout, stderr: `${stderr}${argv[0]}: ${err.message}\n` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const status = aborted ? ABORTED : timedOut ? TIMED_OUT : (code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
      resolve({ code: status, stdout, stderr: aborted ? `${stderr}aborted\n` : timedOut ? `${stderr}timed out\n` : stderr });
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}
