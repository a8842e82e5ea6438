/**
 * A /proc for each chroot directory of a running container (an MCP image server's filesystem): the container's own
 * /proc, bound recursively (its masked and read-only paths come along) over the small tmpfs the runtime mounted at
 * `<dir>/proc` when it started the container (oci-config.ts, chrootMounts).
 *
 * Why after start and from the host: a proc of the container's PID namespace exists only once the container does,
 * crun mounts a proc only at /proc ("it must be mounted at the root"), crun and runc open a bind's source on the host
 * (a source under the root filesystem names the host's empty directory, not the container's proc), and the sandbox
 * may not mount (no CAP_SYS_ADMIN, seccomp). So the host's own mount(8) does it with `--namespace`: it enters the
 * container's mount namespace for the mount call only and runs no binary of the sandbox's. Both paths resolve
 * inside the container's root, so a link the sandbox planted can only point within its own tree; the target is a
 * mount point (the tmpfs), which the sandbox cannot unlink or rename.
 */
import { execOk } from '../util/exec';

/** Why `dir` cannot be a chroot directory (an absolute path of plain names), or undefined. */
export function chrootDirProblem(dir: string): string | undefined {
  if (/^(\/[A-Za-z0-9._-]+)+$/.test(dir) && !dir.split('/').some((part) => part === '.' || part === '..')) return undefined;
  return `chroot dir ${JSON.stringify(dir)} must be an absolute path of plain names (letters, digits, . _ -)`;
}

/** mount(8)'s argv binding the container's /proc at `<dir>/proc` in the mount namespace of the process `pid`. */
export function chrootProcArgv(pid: number, dir: string): string[] {
  if (!(Number.isInteger(pid) && pid > 0)) throw new Error(`not a process ID: ${pid}`);
  const problem = chrootDirProblem(dir);
  if (problem) throw new Error(problem);
  // --no-canonicalize: the paths are the container's, not the host's; --no-mtab: nothing to record anywhere.
  return ['mount', '--namespace', String(pid), '--no-canonicalize', '--no-mtab', '--rbind', '/proc', `${dir}/proc`];
}

/** Binds the container's /proc into each of `dirs` (chroot directories of the container whose first process is `pid`). */
export async function bindChrootProcs(pid: number, dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) await execOk(chrootProcArgv(pid, dir), { timeoutMs: 15_000 });
}
