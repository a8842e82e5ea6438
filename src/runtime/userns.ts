/**
 * A sandbox's user namespace and network namespace, made together before its container: the network namespace is
 * owned by the user namespace, so the sandbox's root (NET_ADMIN in its user namespace) may change its own
 * interfaces and firewall (the transparent proxy template's iptables), and nothing else's. The container joins both
 * by path. Made by a short-lived `unshare -U -n` process whose maps the kit writes from outside (as root of the
 * host's user namespace, so no setuid helper is needed); the network namespace is named like any other
 * (`ip netns attach`), the user namespace is bind-mounted at `USERNS_DIR/<name>` until the container has joined it.
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
 * A process in a new user and network namespace, held until `release`: `unshare -U -n` running a shell that says
 * when it is in them (one line on stdout), then sleeps.
 */
function holdNamespaces(): Promise<{ pid: number; release: () => void }> {
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-U', '-n', '--', 'sh', '-c', 'echo; exec sleep 60'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`unshare -U -n exited (${code}): ${stderr.trim()}`)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', () => clearTimeout(timer));
    child.stdout.once('data', () => resolve({ pid: child.pid!, release: () => child.kill('SIGKILL') }));
  });
}

/**
 * Makes the pair: the network namespace `name` (/run/netns/<name>) inside a new user namespace with mapping `m`.
 * Three processes: the holder, then the user namespace's bind mount and `ip netns attach` side by side; the maps are
 * written from here.
 */
export async function createNamespacePair(name: string, m: IdMapping): Promise<{ usernsPath: string }> {
  const usernsPath = usernsPathOf(name);
  let holder: { pid: number; release: () => void } | undefined;
  try {
    holder = await holdNamespaces();
    const map = `0 ${m.base} ${m.size}\n`;
    fs.writeFileSync(`/proc/${holder.pid}/uid_map`, map);
    fs.writeFileSync(`/proc/${holder.pid}/gid_map`, map);
    fs.mkdirSync(USERNS_DIR, { recursive: true, mode: 0o755 });
    fs.writeFileSync(usernsPath, '', { flag: 'a' });
    const [bound, attached] = await Promise.allSettled([
      execOk(['mount', '--bind', `/proc/${holder.pid}/ns/user`, usernsPath]),
      execOk(['ip', 'netns', 'attach', name, String(holder.pid)]),
    ]);
    if (attached.status === 'rejected') throw attached.reason;
    if (bound.status === 'rejected') {
      await exec(['ip', 'netns', 'del', name]);
      throw bound.reason;
    }
    return { usernsPath };
  } catch (err) {
    await removeUserNamespace(name);
    throw new Error(`cannot make the user and network namespaces ${name}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    holder?.release();
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
