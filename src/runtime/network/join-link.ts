/**
 * How a sandbox's link reaches its network namespace when the container makes that namespace itself (crun, runc):
 * the bridge network parks the sandbox's end of the veth pair on the bridge's side, down, under a name of its own
 * (parkedPeerName), with its port's rules in place; then JOIN_SCRIPT, run by the OCI runtime as a createRuntime hook
 * once the container's namespaces exist and before its first process runs, moves it in by the container's pid,
 * names the namespace (/run/netns/<name>, as every other) and configures it as eth0. Under runsc the same script runs
 * against a holder process instead (bridge-network.ts, `pending.prepare`).
 */
import { createHash } from 'node:crypto';

/** The sandbox's end of the veth pair while it waits on the bridge's side (15 characters at most). */
export function parkedPeerName(netns: string): string {
  return `w${createHash('sha256').update(netns).digest('hex').slice(0, 12)}`;
}

/**
 * sh arguments: the bridge's namespace, the parked link, the namespace's name, address/prefix, gateway, the kit's
 * mount namespace, and the pid of a process in the namespace; without the pid it is read from the OCI state on stdin
 * (no program but sh runs for that). It refuses a pid whose network namespace is its own (the runtime's: the host's).
 * The name is made in the kit's mount namespace (nsenter): the runtime runs in a mount namespace of its own
 * (oci-cli.ts), where a name would be seen by nothing else and would not hold the namespace.
 */
export const JOIN_SCRIPT = [
  'pid=$7',
  'if [ -z "$pid" ]; then',
  '  s=; while IFS= read -r l || [ -n "$l" ]; do s="$s$l"; done',
  `  case $s in *'"pid":'*) p=\${s#*'"pid":'}; p=\${p#"\${p%%[0-9]*}"}; pid=\${p%%[!0-9]*} ;; esac`,
  'fi',
  `case $pid in '' | *[!0-9]* | 0 | 1) echo "network join: no container pid in its state" >&2; exit 1 ;; esac`,
  `if [ /proc/$pid/ns/net -ef /proc/$$/ns/net ]; then echo "network join: process $pid is in the runtime's own network namespace" >&2; exit 1; fi`,
  'ip -n "$1" link set "$2" netns "$pid"',
  'nsenter --mount="$6" ip netns attach "$3" "$pid"',
  // No IPv6 link-local address: the guard drops IPv6 anyway; this keeps the sandbox from even trying.
  'nsenter --net=/proc/$pid/ns/net ip -b - <<EOF',
  'link set $2 name eth0',
  'link set lo up',
  'link set eth0 addrgenmode none',
  'addr add $4 dev eth0',
  'link set eth0 up',
  'route add default via $5',
  'EOF',
  '',
].join('\n');

/** argv running JOIN_SCRIPT (the hook's, when `pid` is absent). */
export function joinArgv(
  facts: { bridgeNamespace: string; peer: string; netns: string; addressWithPrefix: string; gateway: string },
  pid?: number,
): string[] {
  return [
    '/bin/sh',
    '-ec',
    JOIN_SCRIPT,
    'sandbox-kit-join',
    facts.bridgeNamespace,
    facts.peer,
    facts.netns,
    facts.addressWithPrefix,
    facts.gateway,
    `/proc/${process.pid}/ns/mnt`,
    ...(pid !== undefined ? [String(pid)] : []),
  ];
}
