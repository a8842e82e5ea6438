/** Limits of this host that bound what a container may ask for. */
import * as fs from 'node:fs';

/** The hard RLIMIT_NOFILE from a /proc/<pid>/limits text ("unlimited" counts as no bound). */
export function hardNofile(procLimits: string): number | undefined {
  const m = /^Max open files\s+\S+\s+(\S+)/m.exec(procLimits);
  if (!m || m[1] === 'unlimited') return undefined;
  return Number(m[1]);
}

/** A container's NOFILE: the wanted value, but never above what this process may set (no CAP_SYS_RESOURCE). */
export function containerNofile(wanted: number): number {
  const hard = hardNofile(fs.readFileSync('/proc/self/limits', 'utf8'));
  return hard === undefined ? wanted : Math.min(wanted, hard);
}
