/**
 * A sandbox's user namespace and network namespace, made together before its container: the network namespace is
 * owned by the user namespace, so the sandbox's root (NET_ADMIN in its user namespace) may change its own
 * interfaces and firewall (the transparent proxy template's iptables), and nothing else's. The container joins both
 * by path. Made by a short-lived `unshare -U -n` process whose maps the kit writes from outside (as root of the
 * host's user namespace, so no setuid helper is needed); the network namespace is named like any other
 * (`ip netns attach`), the user namespace is bind-mounted at `USERNS_DIR/<name>` until the container has joined it.
 */
import * as fs from 'node:fs';
import { exec } from '../util/exec';
import type { IdMapping } from './id-shift';

export const USERNS_DIR = '/run/sandbox-kit/userns';

export function usernsPathOf(netnsName: string): string {
  return `${USERNS_DIR}/${netnsName}`;
}

const CREATE = [
  'set -e',
  "exec 3< <(exec unshare -U -n sh -c 'echo $$; exec sleep 60')",
  'read -r pid <&3',
  'trap \'kill "$pid" 2>/dev/null || true\' EXIT',
  'echo "0 $2 $3" > /proc/$pid/uid_map',
  'echo "0 $2 $3" > /proc/$pid/gid_map',
  'mkdir -p "$(dirname "$4")"',
  'touch "$4"',
  'mount --bind /proc/$pid/ns/user "$4"',
  'ip netns attach "$1" "$pid"',
].join('\n');

/** Makes the pair: the network namespace `name` (/run/netns/<name>) inside a new user namespace with mapping `m`. */
export async function createNamespacePair(name: string, m: IdMapping): Promise<{ usernsPath: string }> {
  const usernsPath = usernsPathOf(name);
  const r = await exec(['bash', '-c', CREATE, 'bash', name, String(m.base), String(m.size), usernsPath]);
  if (r.code !== 0) {
    await removeUserNamespace(name);
    throw new Error(`cannot make the user and network namespaces ${name}: ${r.stderr.trim()}`);
  }
  return { usernsPath };
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
