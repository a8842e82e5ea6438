/**
 * How a sandbox's link reaches its network namespace once that namespace exists: the bridge network parks the
 * sandbox's end of the veth pair on the bridge's side, down, under a name of its own (parkedPeerName), with its
 * port's rules in place; joinNetwork, called by the kit with the pid of a process in the new namespace, moves the
 * link in as `eth0`, names the namespace (/run/netns/<name>, as every other) and configures it. Under crun and runc
 * that process is the container's (oci-runtime.ts), under runsc a holder made ahead (bridge-network.ts,
 * `pending.prepare`).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../../util/exec';

/** The sandbox's end of the veth pair while it waits on the bridge's side (15 characters at most). */
export function parkedPeerName(netns: string): string {
  return `w${createHash('sha256').update(netns).digest('hex').slice(0, 12)}`;
}

export interface JoinFacts {
  /** The namespace holding the bridge, where the link is parked. */
  bridgeNamespace: string;
  /** The parked link (parkedPeerName). */
  peer: string;
  /** The name the sandbox's namespace gets (/run/netns/<netns>). */
  netns: string;
  /** The sandbox's address with the subnet's prefix, e.g. 198.18.2.5/24. */
  addressWithPrefix: string;
  /** The default route's next hop: the bridge's address. */
  gateway: string;
}

/** Why `pid` cannot be the process whose network namespace a link joins, or undefined when it can. */
export function joinPidProblem(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 1) return `no container pid (got ${pid})`;
  const theirs = fs.statSync(`/proc/${pid}/ns/net`, { throwIfNoEntry: false });
  if (!theirs) return `process ${pid} is gone`;
  const own = fs.statSync('/proc/self/ns/net');
  if (theirs.ino === own.ino && theirs.dev === own.dev) return `process ${pid} is in the kit's own network namespace`;
  return undefined;
}

/**
 * The commands for the sandbox's namespace, in order, for `ip -b` there: the link renamed `eth0` on its way in, so
 * only its address, state and route are left. No IPv6 link-local address: the guard drops IPv6 anyway; this keeps
 * the sandbox from even trying.
 */
export function insideBatch(facts: JoinFacts): string {
  return [
    'link set lo up',
    'link set eth0 addrgenmode none',
    `addr add ${facts.addressWithPrefix} dev eth0`,
    'link set eth0 up',
    `route add default via ${facts.gateway}`,
    '',
  ].join('\n');
}

/**
 * Moves the parked link into the network namespace of process `pid` as `eth0`, names that namespace `facts.netns`
 * in the kit's mount namespace (so `list`, `detach` and a restarted platform find it) and configures it. Three `ip`
 * processes, two of them side by side: the move (the kernel's slowest step here) and the name by pid, then the
 * configuration by name. Refuses a pid of the kit's own network namespace before any runs. On failure the name may
 * stay; the network's detach removes it.
 */
export async function joinNetwork(facts: JoinFacts, pid: number): Promise<void> {
  const problem = joinPidProblem(pid);
  if (problem) throw new Error(`network join of ${facts.netns}: ${problem}`);
  const [moved, named] = await Promise.allSettled([
    execOk(['ip', '-n', facts.bridgeNamespace, 'link', 'set', facts.peer, 'netns', String(pid), 'name', 'eth0']),
    execOk(['ip', 'netns', 'attach', facts.netns, String(pid)]),
  ]);
  const failed = [moved, named].find((r) => r.status === 'rejected');
  if (failed) throw new Error(`network join of ${facts.netns}: ${(failed.reason as Error).message}`);
  const r = await exec(['ip', '-n', facts.netns, '-b', '-'], { input: insideBatch(facts) });
  if (r.code !== 0) throw new Error(`network join of ${facts.netns}: ip -b in the sandbox's namespace failed: ${r.stderr.trim()}`);
}
