/** Running commands on the host and inside a lab's namespaces. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { startTimeOf } from '../util/process-start';

export { exec as run, execOk as must, type ExecOptions as RunOptions, type ExecResult as RunResult } from '../util/exec';

/**
 * argv that runs `argv` inside namespace `ns`. With `etcLayer`, the command's /etc is the real /etc with the layer
 * directory on top (a read-only overlay in the command's own mount namespace, which `ip netns exec` makes private):
 * this is how the proxy host and each sandbox see their own /etc/sandbox-kit, /etc/sysctl.d and
 * /etc/systemd/system files at the rendered paths without anything being written to the real /etc.
 * (`ip netns exec` bind-mounts /etc/netns/NS/* too, but only over entries that already exist in /etc, and
 * /etc/sandbox-kit does not.) Child processes, daemons and SSH sessions started from there inherit the view.
 */
export function inNamespace(ns: string, argv: readonly string[], etcLayer?: string): string[] {
  if (!etcLayer) return ['ip', 'netns', 'exec', ns, ...argv];
  if (/[:,\s]/.test(etcLayer)) throw new Error(`overlay directory ${etcLayer} must not contain ':', ',' or spaces`);
  const script = 'mount -t overlay sandbox-kit-etc -o "lowerdir=$0:/etc" /etc && exec "$@"';
  return ['ip', 'netns', 'exec', ns, 'sh', '-c', script, etcLayer, ...argv];
}

/**
 * Starts a long-running process in the background, detached from the caller (its own session, output to a log
 * file), so `lab up` can return while the lab keeps running. Returns the pid.
 */
export function spawnDetached(argv: readonly string[], logFile: string, env?: NodeJS.ProcessEnv): number {
  const fd = openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], env: env ?? process.env });
    if (child.pid === undefined) throw new Error(`cannot start ${argv.join(' ')}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** spawnDetached with the process's start time (util/process-start.ts), which a lab keeps beside the pid. */
export function spawnLabProcess(argv: readonly string[], logFile: string): { pid: number; startTime: string } {
  const pid = spawnDetached(argv, logFile);
  return { pid, startTime: startTimeOf(pid) };
}

export function spawnAttached(argv: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(argv[0]!, argv.slice(1), { stdio: 'pipe', ...options });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
