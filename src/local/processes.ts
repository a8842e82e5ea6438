/** Processes the local system runs in the root namespace: started detached, stopped by pid after checking it is ours. */
import { existsSync, readFileSync } from 'node:fs';
import { isAlive, spawnDetached } from '../lab/run';
import { sleep, waitFor } from '../util/poll';
import { signalProcess } from '../util/signal';
import type { LocalProcess } from './state';

export function startDetached(role: string, argv: string[], log: string, marker: string): LocalProcess {
  return { role, pid: spawnDetached(argv, log), log, marker };
}

/** Whether `pid` is alive and still the process we started (its command line contains the marker). */
export function isOurs(p: LocalProcess): boolean {
  if (!isAlive(p.pid)) return false;
  try {
    return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8')
      .split('\0')
      .some((arg) => arg.includes(p.marker));
  } catch {
    return false;
  }
}

/** SIGTERM, a grace period, then SIGKILL; returns how many were running. */
export async function stopProcesses(processes: readonly LocalProcess[], graceMs = 3_000): Promise<number> {
  const running = processes.filter(isOurs);
  for (const p of running) signalProcess(p.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (running.some(isOurs) && Date.now() < deadline) await sleep(50);
  for (const p of running) if (isOurs(p)) signalProcess(p.pid, 'SIGKILL');
  return running.length;
}

/** Waits for a line matching `pattern` in a process's log; fails early, with the log's tail, when the process dies. */
export async function waitForLogLine(p: LocalProcess, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const read = () => (existsSync(p.log) ? readFileSync(p.log, 'utf8') : '');
  return waitFor(
    `${p.role} to report ${pattern}`,
    () => {
      const match = pattern.exec(read());
      if (match) return match;
      if (!isAlive(p.pid)) throw new Error(`${p.role} exited; its log ${p.log} ends:\n${read().split('\n').slice(-15).join('\n')}`);
      return undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
}
