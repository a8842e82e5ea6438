/**
 * `sandbox-kit platform` as its own process on a state dir, for the tests that kill it (SIGKILL) and start it again
 * over the same state: started from a bundled CLI, its URLs read from what it prints, its Redis shut down at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Redis from 'ioredis';

export interface PlatformProcess {
  proc: ChildProcess;
  url: string;
  sandboxUrl: string;
  key: string;
}

/** Starts `cli platform --state-dir stateDir ...args`; `onStderr` is told each chunk it writes to stderr (its log). */
export function startPlatformProcess(
  cli: string,
  stateDir: string,
  args: string[] = [],
  onStderr?: (text: string) => void,
): Promise<PlatformProcess> {
  const proc = spawn(process.execPath, [cli, 'platform', '--state-dir', stateDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
    onStderr?.(d.toString());
  });
  return new Promise((resolve, reject) => {
    let url: string | undefined;
    let sandboxUrl: string | undefined;
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      url = /^export E2B_API_URL=(\S+)$/.exec(line)?.[1] ?? url;
      sandboxUrl = /^export E2B_SANDBOX_URL=(\S+)$/.exec(line)?.[1] ?? sandboxUrl;
      if (/^export E2B_API_KEY=/.test(line))
        resolve({
          proc,
          url: url as string,
          sandboxUrl: sandboxUrl as string,
          key: fs.readFileSync(join(stateDir, 'api-key'), 'utf8').trim(),
        });
    });
    proc.once('exit', (code) => reject(new Error(`the platform exited (${code}): ${stderr}`)));
  });
}

/** SIGKILL, as a crash: the platform's sandboxes, network and Redis stay behind. */
export async function killPlatformProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGKILL');
  await exited;
}

/** Shuts down the Redis a killed platform left running on its state dir (if any). */
export async function shutDownLeftRedis(stateDir: string): Promise<void> {
  const socket = join(stateDir, 'redis', 'redis.sock');
  if (!fs.existsSync(socket)) return;
  // The platform's Redis wants its password (kept beside its socket).
  const passwordFile = join(stateDir, 'redis', 'password');
  const password = fs.existsSync(passwordFile) ? fs.readFileSync(passwordFile, 'utf8').trim() : undefined;
  const redis = new Redis({ path: socket, lazyConnect: true, retryStrategy: () => null, ...(password ? { password } : {}) });
  redis.on('error', () => {});
  await redis
    .connect()
    .then(() => redis.call('SHUTDOWN', 'NOSAVE'))
    .catch(() => {});
  redis.disconnect();
}
