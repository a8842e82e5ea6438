/**
 * What a sandbox uses right now, read from the kernel: CPU time and memory from its cgroup (v1 controllers or
 * cgroup2, whichever holds them on this host), and the bytes its own writes take (its disk's used blocks, or a walk of
 * its overlay upper dir where it has no disk of its own). Parsing is pure; reading is a handful of small files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CgroupMount } from './cgroup-layout';
import type { SandboxUsage } from './types';

/** `key value` lines (memory.stat, cpu.stat) as numbers. */
export function parseKeyValues(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^[0-9]+$/.test(value)) values.set(key, Number(value));
  }
  return values;
}

/** The files one reading needs, by hierarchy kind. */
export interface CgroupFiles {
  /** v1 cpuacct.usage (nanoseconds) or v2 cpu.stat (usage_usec). */
  cpu: { kind: 'v1' | 'v2'; file: string };
  /** v1 memory.usage_in_bytes or v2 memory.current. */
  memoryCurrent: string;
  memoryStat: { kind: 'v1' | 'v2'; file: string };
}

/** Where the CPU and memory files of `relative` are: the v1 controller when it is mounted, else cgroup2. */
export function cgroupFilesOf(relative: string, mounts: readonly CgroupMount[]): CgroupFiles | undefined {
  const v1 = (controller: string) => mounts.find((m) => m.type === 'cgroup' && m.controllers.includes(controller));
  const v2 = mounts.find((m) => m.type === 'cgroup2');
  const cpuacct = v1('cpuacct');
  const memory = v1('memory');
  if ((!cpuacct || !memory) && !v2) return undefined;
  const at = (m: CgroupMount, file: string) => path.join(m.mountPoint, relative, file);
  return {
    cpu: cpuacct ? { kind: 'v1', file: at(cpuacct, 'cpuacct.usage') } : { kind: 'v2', file: at(v2 as CgroupMount, 'cpu.stat') },
    memoryCurrent: memory ? at(memory, 'memory.usage_in_bytes') : at(v2 as CgroupMount, 'memory.current'),
    memoryStat: memory ? { kind: 'v1', file: at(memory, 'memory.stat') } : { kind: 'v2', file: at(v2 as CgroupMount, 'memory.stat') },
  };
}

/** CPU microseconds from cpuacct.usage (ns) or cpu.stat. */
export function cpuUsecOf(kind: 'v1' | 'v2', text: string): number {
  if (kind === 'v1') return Math.floor(Number(text.trim()) / 1000);
  return parseKeyValues(text).get('usage_usec') ?? 0;
}

/** Used (current minus inactive file pages, as `free` would count it) and cache, from the current total and memory.stat. */
export function memoryOf(kind: 'v1' | 'v2', current: number, statText: string): { used: number; cache: number } {
  const stat = parseKeyValues(statText);
  const inactiveFile = (kind === 'v1' ? stat.get('total_inactive_file') : stat.get('inactive_file')) ?? 0;
  const cache = (kind === 'v1' ? stat.get('total_cache') : stat.get('file')) ?? 0;
  return { used: Math.max(0, current - inactiveFile), cache };
}

/** Allocated bytes of every file under `dir` (not following links, not crossing into other file systems). */
export function diskUsedBytes(dir: string): number {
  let total = 0;
  let device: number | undefined;
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      const st = fs.lstatSync(full, { throwIfNoEntry: false });
      if (!st || st.dev !== device) continue;
      total += st.blocks * 512;
      if (e.isDirectory()) walk(full);
    }
  };
  const root = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!root) return 0;
  device = root.dev;
  walk(dir);
  return total;
}

/**
 * One reading of a sandbox's cgroup and upper dir; undefined when its cgroup is gone. With `ownDisk` (the upper dir
 * is on the sandbox's own disk, sandbox-disk.ts) its bytes are the disk's used blocks, as `df /` shows them inside:
 * one statfs instead of a walk of every file it wrote (the walks of 200 sandboxes took 80 ms of the platform's event
 * loop every 5 s).
 */
export function readSandboxUsage(
  cgroupRelative: string,
  upperDir: string,
  mounts: readonly CgroupMount[],
  ownDisk = false,
): SandboxUsage | undefined {
  const files = cgroupFilesOf(cgroupRelative, mounts);
  if (!files) return undefined;
  try {
    const cpuUsageUsec = cpuUsecOf(files.cpu.kind, fs.readFileSync(files.cpu.file, 'utf8'));
    const current = Number(fs.readFileSync(files.memoryCurrent, 'utf8').trim());
    const memory = memoryOf(files.memoryStat.kind, current, fs.readFileSync(files.memoryStat.file, 'utf8'));
    const fsStats = fs.statfsSync(upperDir);
    return {
      cpuUsageUsec,
      memoryUsedBytes: memory.used,
      memoryCacheBytes: memory.cache,
      diskUsedBytes: ownDisk ? (fsStats.blocks - fsStats.bfree) * fsStats.bsize : diskUsedBytes(upperDir),
      diskTotalBytes: fsStats.blocks * fsStats.bsize,
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
