/**
 * The cgroup directories of an instance in every hierarchy (v1 controllers, the cgroup2 mount, or both on a
 * hybrid host). The OCI runtimes remove a container's own directories but leave the parent; runc on a hybrid host
 * also makes them in the cgroup2 part. Removal is rmdir only: a cgroup with processes is left to the caller.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cgroupMounts, type CgroupMount } from './cgroup-layout';

export function hostCgroupMounts(): CgroupMount[] {
  return cgroupMounts(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
}

/** `relative` (e.g. sandbox-kit-x/abc) in every hierarchy, deduplicated (co-mounted controllers share one). */
export function cgroupDirs(relative: string, mounts: CgroupMount[] = hostCgroupMounts()): string[] {
  return [...new Set(mounts.map((m) => path.join(m.mountPoint, relative)))];
}

function rmdirQuiet(dir: string): 'gone' | 'busy' {
  try {
    fs.rmdirSync(dir);
    return 'gone';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'gone' : 'busy';
  }
}

function removeTree(dir: string, left: string[]): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // not there
  }
  for (const e of entries) if (e.isDirectory()) removeTree(path.join(dir, e.name), left);
  if (rmdirQuiet(dir) === 'busy') left.push(dir);
}

/** Removes `relative` in every hierarchy, children first; returns the directories that could not be removed. */
export function removeCgroup(relative: string, mounts: CgroupMount[] = hostCgroupMounts()): string[] {
  const left: string[] = [];
  for (const dir of cgroupDirs(relative, mounts)) removeTree(dir, left);
  return left;
}

/** Every process in `relative`, in any hierarchy. */
export function cgroupPids(relative: string, mounts: CgroupMount[] = hostCgroupMounts()): number[] {
  const pids = new Set<number>();
  for (const dir of cgroupDirs(relative, mounts)) {
    const walk = (d: string): void => {
      try {
        for (const line of fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n')) if (line) pids.add(Number(line));
        for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
      } catch {
        // gone meanwhile
      }
    };
    walk(dir);
  }
  return [...pids];
}

/** Thaws `relative` and everything below it (v1 freezer or v2 cgroup.freeze), so killed processes can die. */
export function thawCgroup(relative: string, mounts: CgroupMount[] = hostCgroupMounts()): void {
  const walk = (d: string): void => {
    for (const [file, value] of [
      ['freezer.state', 'THAWED'],
      ['cgroup.freeze', '0'],
    ] as const) {
      try {
        fs.writeFileSync(path.join(d, file), value);
      } catch {
        // not this kind of hierarchy
      }
    }
    try {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    } catch {
      // gone meanwhile
    }
  };
  for (const dir of cgroupDirs(relative, mounts)) walk(dir);
}
