/** Running host tools (the OCI CLI, ip, iptables, mount, mmdebstrap) with a deadline: the runtime and the lab both use it. */
import { spawn } from 'node:child_process';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  input?: string;
  /** Kill the command after this long (default 30 s); a killed command resolves with code 124. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Kills the command when aborted; it resolves with code 130. */
  signal?: AbortSignal;
}

export function exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
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
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ code: 127, stdout, stderr: `${stderr}${argv[0]}: ${err.message}\n` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const status = aborted ? 130 : timedOut ? 124 : (code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
      resolve({ code: status, stdout, stderr: aborted ? `${stderr}aborted\n` : timedOut ? `${stderr}timed out\n` : stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Runs a command that must succeed; the error names the command and carries its stderr. */
export async function execOk(argv: readonly string[], options: ExecOptions = {}): Promise<string> {
  const result = await exec(argv, options);
  if (result.code !== 0) {
    throw new Error(`command failed (exit ${result.code}): ${argv.join(' ')}: ${result.stderr.trim() || result.stdout.trim()}`);
  }
  return result.stdout;
}
