/**
 * How a sandbox's link reaches its network namespace once that namespace exists: the bridge network parks the
 * sandbox's end of the veth pair on the bridge's side, down, under a name of its own (parkedPeerName), with its
 * port's rules in place; joinNetwork, called by the kit with the pid of a process in the new namespace, moves the
 * link in as `eth0`, names the namespace (/run/netns/<name>, as every other) and configures it. Under crun and runc
 * that process is the container's (oci-runtime.ts), under runsc a holder made ahead (bridge-network.ts,
 * `pending.prepare`). The build's netns-join program (netns-join.c) does all of it in one process; without it, `ip`
 * commands do.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../../util/exec';
import { inNetns, NETNS_DIR } from './in-netns';

/** The sandbox's end of the veth pair while it waits on the bridge's side (15 characters at most). */
export function parkedPeerName(netns: string): string {
  return `w${createHash('sha256').update(netns).digest('hex').slice(0, 12)}`;
}

export interface JoinFacts {
  /** The namespace holding the bridge, where the link is parked. */
  bridgeNamespace: string;
  /** The parked link (parkedPeerName). */
  peer: string;
  /** Its bridge-side end, the bridge's port (bridge-network.ts, bridgePortName). */
  port: string;
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

/** How long a port may take to forward once its link is up before the join fails: the sandbox is unreachable. */
export const FORWARDING_TIMEOUT_MS = 2000;

/**
 * Moves the parked link into the network namespace of process `pid` as `eth0`, names that namespace `facts.netns`
 * in the kit's mount namespace (so `list`, `detach` and a restarted platform find it), configures it and waits until
 * the bridge forwards to its port: the kernel turns a port to forwarding a few milliseconds after its link comes up,
 * and a connection tried before then loses its SYN (a second's stall; the join answers only once the sandbox is
 * reachable). `alongside` (the runtime's start) runs meanwhile, from the start. Resolves when both are done; rejects
 * with the join's failure first, then `alongside`'s. Refuses a pid of the kit's own network namespace before any
 * runs. On failure the name may stay; the network's detach removes it. With `program` (netns-join.c) one process does
 * the join; without it, `ip` commands (joinLink).
 */
export async function joinNetwork(facts: JoinFacts, pid: number, alongside?: () => Promise<unknown>, program?: string): Promise<void> {
  const problem = joinPidProblem(pid);
  if (problem) throw new Error(`network join of ${facts.netns}: ${problem}`);
  const join = program === undefined ? joinLink(facts, pid) : execOk(netnsJoinArgv(program, facts, pid)).then(() => undefined);
  const [joined, done] = await Promise.allSettled([join, alongside?.()]);
  if (joined.status === 'rejected') throw new Error(`network join of ${facts.netns}: ${(joined.reason as Error).message}`);
  if (done.status === 'rejected') throw done.reason;
}

/**
 * argv of the netns-join program (netns-join.c) doing what joinLink's commands do, in the same order, for the process
 * `pid`: the bridge's namespace and the sandbox's name as paths, the address and its prefix apart, the forwarding
 * wait's bound in ms.
 */
export function netnsJoinArgv(program: string, facts: JoinFacts, pid: number): string[] {
  const [address, prefix] = facts.addressWithPrefix.split('/');
  return [
    program,
    `${NETNS_DIR}/${facts.bridgeNamespace}`,
    facts.peer,
    facts.port,
    String(pid),
    `${NETNS_DIR}/${facts.netns}`,
    address!,
    prefix!,
    facts.gateway,
    String(FORWARDING_TIMEOUT_MS),
  ];
}

/**
 * Three `ip` processes, two of them side by side: the move (the kernel's slowest step here) and the name by pid; then
 * the configuration by name; then `ip -d link show` of the port until it forwards (once, nearly always).
 */
async function joinLink(facts: JoinFacts, pid: number): Promise<void> {
  const [moved, named] = await Promise.allSettled([
    execOk(inNetns(facts.bridgeNamespace, ['ip', 'link', 'set', facts.peer, 'netns', String(pid), 'name', 'eth0'])),
    execOk(['ip', 'netns', 'attach', facts.netns, String(pid)]),
  ]);
  const failed = [moved, named].find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const r = await exec(inNetns(facts.netns, ['ip', '-b', '-']), { input: insideBatch(facts) });
  if (r.code !== 0) throw new Error(`ip -b in the sandbox's namespace failed: ${r.stderr.trim()}`);
  const deadline = Date.now() + FORWARDING_TIMEOUT_MS;
  for (;;) {
    // One link asked for by name (`bridge link show` would list every port of the bridge).
    const state = portState(await execOk(inNetns(facts.bridgeNamespace, ['ip', '-d', '-j', 'link', 'show', 'dev', facts.port])));
    if (state === 'forwarding') return;
    if (Date.now() > deadline)
      throw new Error(`its port ${facts.port} is ${state ?? 'gone'}, not forwarding, ${FORWARDING_TIMEOUT_MS} ms after its link came up`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The bridge port state in `ip -d -j link show dev PORT` output (forwarding, disabled, ...), undefined when none. */
export function portState(json: string): string | undefined {
  const links = JSON.parse(json.trim() || '[]') as Array<{ linkinfo?: { info_slave_data?: { state?: string } } }>;
  return links[0]?.linkinfo?.info_slave_data?.state;
}
