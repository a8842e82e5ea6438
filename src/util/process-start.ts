/**
 * A process told apart from a later one with the same pid: pids come back quickly on a busy host (pid_max may be
 * 32768), so a pid kept in a file or a record names a process only together with its start time (field 22 of
 * /proc/<pid>/stat, clock ticks after boot). Whatever signals a kept pid checks the pair first.
 */
import * as fs from 'node:fs';

/** Field 22 of /proc/<pid>/stat (start time) and whether the process still runs (not a zombie); undefined: gone. */
export function processStart(statText: string): { startTime: string; alive: boolean } | undefined {
  // The command (field 2) may hold spaces and parentheses: fields after it follow the last ')'.
  const rest = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  if (rest.length < 20) return undefined;
  return { startTime: rest[19]!, alive: rest[0] !== 'Z' && rest[0] !== 'X' };
}

/** processStart of process `pid` now; undefined when there is none. */
export function readProcessStart(pid: number): { startTime: string; alive: boolean } | undefined {
  try {
    return processStart(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The start time of the running process `pid` ('' when it is gone or a zombie): what to keep beside the pid. */
export function startTimeOf(pid: number): string {
  const start = readProcessStart(pid);
  return start?.alive ? start.startTime : '';
}

/** Whether `pid` is still the running process that had `startTime` (never for ''). */
export function isSameProcess(pid: number, startTime: string): boolean {
  return startTime !== '' && startTimeOf(pid) === startTime;
}
