/**
 * A user namespace and network namespace made together, before a container that joins them by path: the network
 * namespace is owned by the user namespace, so the container's root (NET_ADMIN in its user namespace) may change its
 * own interfaces and firewall, and nothing else's. Build steps join both by path; a sandbox under runsc joins the
 * network namespace made here by path (bridge-network.ts, `pending.prepare`). Under crun and runc a sandbox's
 * container makes both itself (one clone), and no holder is needed. Made by a short-lived `unshare -U -n` process
 * whose maps the kit writes from outside (as root of the host's user namespace, so no setuid helper is needed); the
 * network namespace is named like any other (`ip netns attach`), the user namespace is bind-mounted at
 * `USERNS_DIR/<name>` until the container has joined it.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { exec, execOk } from '../util/exec';
import type { IdMapping } from './id-shift';

export const USERNS_DIR = '/run/sandbox-kit/userns';

export function usernsPathOf(netnsName: string): string {
  return `${USERNS_DIR}/${netnsName}`;
}

/**
 * A process in a new network namespace (and a new user namespace with `userns`), held until `release`: `unshare`
 * running a shell that says when it is in them (one line on stdout), then sleeps.
 */
function holdNamespaces(userns: boolean): Promise<{ pid: number; release: () => void }> {
  return new Promise((resolve, reject) => {
    const flags = userns ? ['-U', '-n'] : ['-n'];
    const child = spawn('unshare', [...flags, '--', 'sh', '-c', 'echo; exec sleep 60'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`unshare ${flags.join(' ')} exited (${code}): ${stderr.trim()}`)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', () => clearTimeout(timer));
    child.stdout.once('data', () => resolve({ pid: child.pid!, release: () => child.kill('SIGKILL') }));
  });
}

/**
 * Runs `use(pid)` while a process `pid` holds a new network namespace, owned by a new user namespace with mapping `m`
 * (written from here) or, with null, by the host's; the namespaces outlive it only where `use` names them.
 */
export async function withNewNamespaces<T>(m: IdMapping | null, use: (pid: number) => Promise<T>): Promise<T> {
  const holder = await holdNamespaces(m !== null);
  try {
    if (m !== null) {
      const map = `0 ${m.base} ${m.size}\n`;
      fs.writeFileSync(`/proc/${holder.pid}/uid_map`, map);
      fs.writeFileSync(`/proc/${holder.pid}/gid_map`, map);
    }
    return await use(holder.pid);
  } finally {
    holder.release();
  }
}

/**
 * Makes the pair: the network namespace `name` (/run/netns/<name>) inside a new user namespace with mapping `m`, the
 * user namespace bound at usernsPathOf(name) (for a container that joins both by path: build steps). Three
 * processes: the holder, then the user namespace's bind mount and `ip netns attach` side by side.
 */
export async function createNamespacePair(name: string, m: IdMapping): Promise<{ usernsPath: string }> {
  const usernsPath = usernsPathOf(name);
  try {
    await withNewNamespaces(m, async (pid) => {
      fs.mkdirSync(USERNS_DIR, { recursive: true, mode: 0o755 });
      fs.writeFileSync(usernsPath, '', { flag: 'a' });
      const [bound, attached] = await Promise.allSettled([
        execOk(['mount', '--bind', `/proc/${pid}/ns/user`, usernsPath]),
        execOk(['ip', 'netns', 'attach', name, String(pid)]),
      ]);
      if (attached.status === 'rejected') throw attached.reason;
      if (bound.status === 'rejected') {
        await exec(['ip', 'netns', 'del', name]);
        throw bound.reason;
      }
    });
    return { usernsPath };
  } catch (err) {
    await removeUserNamespace(name);
    throw new Error(`cannot make the user and network namespaces ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Removes the user namespace's mount and file (the network namespace goes with `ip netns del`). Idempotent. */
export function removeUserNamespace(name: string): Promise<void> {
  return releaseUserNamespace(usernsPathOf(name));
}

/**
 * Drops the name of a user namespace (its bind mount and file). Once a container joined it, the container and the
 * network namespace hold it: nothing of it is left to clean up after them.
 */
export async function releaseUserNamespace(usernsPath: string): Promise<void> {
  if (!fs.existsSync(usernsPath)) return;
  await exec(['umount', usernsPath]);
  fs.rmSync(usernsPath, { force: true });
}

/** The user namespace bound for `name`, when there is one. */
export function existingUsernsPath(name: string): string | undefined {
  const p = usernsPathOf(name);
  return fs.existsSync(p) ? p : undefined;
}
