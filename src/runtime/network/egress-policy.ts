/**
 * A sandbox's egress policy (the E2B SDK's `allowOut` / `denyOut` / `egressProxy`, `allowInternetAccess: false`
 * being a deny of 0.0.0.0/0, and the stack's own proxy for its proxy templates), as iptables rules in the bridge
 * namespace, outside the sandbox. Pure.
 *
 * - Addresses and CIDRs: the sandbox's own filter chain. Allow beats deny: a destination in `allowOut` returns to the
 *   guard (which still drops private and link-local space: an allow rule never opens the host's networks), one in
 *   `denyOut` is rejected, anything else returns too.
 * - Domain names in `allowOut`: every new TCP connection of the sandbox to a denied address (and not an allowed one)
 *   is redirected (nat) to the egress relay of the bridge namespace (egress-relay/), which decides on the TLS SNI or
 *   HTTP Host and the address; the rest the filter chain decides. An egress proxy: every new TCP connection goes to
 *   the relay, which connects through the SOCKS5 proxy. UDP keeps to the filter chain.
 * - `onlyTo` (the stack's proxy): the filter chain passes the proxy's address and port and rejects everything else,
 *   whatever the lists say.
 * DNS to the sandbox's resolvers passes before any policy (guard-rules.ts).
 */
import type { TransformPolicy } from './egress-relay/transform';
import { GUARD_CHAINS, RELAY_PORT } from './guard-rules';

/** A SOCKS5 proxy (RFC 1928, with RFC 1929 user and password when given) the sandbox's TCP leaves through. */
export interface EgressProxy {
  /** A host name or an IPv4 address. */
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/** An address and port a stack-egress sandbox may reach: the stack's Shadowsocks server. */
export interface ProxyTarget {
  address: string;
  port: number;
}

export interface EgressPolicy {
  /** IPv4 networks as a.b.c.d/n, host bits clear. */
  allowOut: string[];
  denyOut: string[];
  /** Canonical domain rules (domain-names.ts): allowed by TLS SNI or HTTP Host. */
  allowDomains?: string[];
  proxy?: EgressProxy;
  /** The only destinations: the stack's proxy (every other rule is ignored). */
  onlyTo?: ProxyTarget[];
  /** Per-domain transforms of HTTPS requests (`network.rules`): its TCP to port 443 goes through the relay. */
  transforms?: TransformPolicy;
}

/** The port whose TCP goes through the relay when a sandbox has transforms: HTTPS. */
export const TRANSFORM_PORT = 443;

export function isEmptyPolicy(p: EgressPolicy | undefined): boolean {
  return (
    p === undefined ||
    (p.allowOut.length === 0 && p.denyOut.length === 0 && !p.allowDomains?.length && !p.proxy && !p.onlyTo?.length && !p.transforms)
  );
}

/** Whether the sandbox's TCP goes through the relay (a domain rule or a proxy, and not pinned to the stack's proxy). */
export function needsRelay(p: EgressPolicy | undefined): boolean {
  return p !== undefined && !p.onlyTo?.length && (!!p.allowDomains?.length || !!p.proxy || !!p.transforms);
}

/** `8.8.8.8` or `8.8.8.0/24` as a canonical network (`8.8.8.8/32`, host bits cleared); undefined when it is neither. */
export function canonicalCidr(text: string): string | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(text.trim());
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255) || m.slice(1, 5).some((o) => o.length > 1 && o.startsWith('0'))) return undefined;
  const prefix = m[5] === undefined ? 32 : Number(m[5]);
  if (prefix > 32) return undefined;
  const value = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  const network = value - (value % size);
  return `${[network >>> 24, (network >>> 16) & 255, (network >>> 8) & 255, network & 255].join('.')}/${prefix}`;
}

/** The sandbox's own filter chain, named after its bridge port (iptables chain names are short). */
export function policyChain(port: string): string {
  return `SKIT-P-${port}`;
}

/** The sandbox's own nat chain: its TCP to the relay, or nothing. */
export function redirectChain(port: string): string {
  return `SKIT-R-${port}`;
}

const REJECT = '-j REJECT --reject-with icmp-admin-prohibited';

/**
 * The nat chain's rules: with a proxy every TCP connection goes to the relay (it leaves only through the proxy); with
 * domain rules alone only TCP to a denied address does (only there can a name change the decision), so everything
 * else goes out at the kernel's speed, decided by the filter chain as the relay would decide it.
 */
function redirectRules(chain: string, policy: EgressPolicy): string[] {
  if (!needsRelay(policy)) return [];
  const to = `-j REDIRECT --to-ports ${RELAY_PORT}`;
  if (policy.proxy) return [`-A ${chain} -p tcp ${to}`];
  // Transforms first: a rule host's HTTPS goes through the relay whatever the address rules say (they still decide).
  const https = policy.transforms ? [`-A ${chain} -p tcp --dport ${TRANSFORM_PORT} ${to}`] : [];
  return [
    ...https,
    ...policy.allowOut.map((c) => `-A ${chain} -d ${c} -j RETURN`),
    ...policy.denyOut.map((c) => `-A ${chain} -p tcp -d ${c} ${to}`),
  ];
}

/**
 * iptables-restore input (--noflush) for both of the sandbox's chains; `jumps`: also the jumps into them (a fresh
 * attachment, which has none yet).
 */
export function policyRestore(port: string, address: string, policy: EgressPolicy, jumps: boolean): string {
  const chain = policyChain(port);
  const redirect = redirectChain(port);
  const filter = policy.onlyTo?.length
    ? [
        ...policy.onlyTo.flatMap((t) => ['tcp', 'udp'].map((p) => `-A ${chain} -d ${t.address}/32 -p ${p} --dport ${t.port} -j RETURN`)),
        `-A ${chain} ${REJECT}`,
      ]
    : [...policy.allowOut.map((c) => `-A ${chain} -d ${c} -j RETURN`), ...policy.denyOut.map((c) => `-A ${chain} -d ${c} ${REJECT}`)];
  return [
    '*filter',
    `:${chain} - [0:0]`,
    ...filter,
    ...(jumps ? [`-A ${GUARD_CHAINS.policy} -s ${address}/32 -j ${chain}`] : []),
    'COMMIT',
    '*nat',
    `:${redirect} - [0:0]`,
    ...redirectRules(redirect, policy),
    ...(jumps ? [`-A ${GUARD_CHAINS.redirect} -s ${address}/32 -j ${redirect}`] : []),
    'COMMIT',
    '',
  ].join('\n');
}

/** Shell lines (in the bridge namespace) that load a fresh attachment's policy with its jumps: one process. */
export function attachPolicyScript(port: string, address: string, policy: EgressPolicy | undefined): string {
  if (isEmptyPolicy(policy)) return '';
  return `iptables-restore -w --noflush <<'RULES'
${policyRestore(port, address, policy as EgressPolicy, true)}RULES
`;
}

/**
 * A shell script (run in the bridge namespace) that puts the policy in place for the sandbox at `address`: the
 * chains' rules are replaced in one iptables-restore transaction, so an update never leaves a moment without rules.
 * An empty policy removes the chains and their jumps.
 */
export function policyScript(port: string, address: string, policy: EgressPolicy | undefined): string {
  const chain = policyChain(port);
  const redirect = redirectChain(port);
  const jump = `${GUARD_CHAINS.policy} -s ${address}/32 -j ${chain}`;
  const natJump = `${GUARD_CHAINS.redirect} -s ${address}/32 -j ${redirect}`;
  if (isEmptyPolicy(policy)) {
    // Each chain only where it exists (a jump never outlives its chain, which iptables keeps while a jump names it): a
    // port that never had a policy, the most common detach, costs two iptables runs, not six.
    return `if iptables -w -n -L ${chain} >/dev/null 2>&1; then
  while iptables -w -D ${jump} 2>/dev/null; do :; done
  iptables -w -F ${chain} 2>/dev/null
  iptables -w -X ${chain} 2>/dev/null
fi
if iptables -w -t nat -n -L ${redirect} >/dev/null 2>&1; then
  while iptables -w -t nat -D ${natJump} 2>/dev/null; do :; done
  iptables -w -t nat -F ${redirect} 2>/dev/null
  iptables -w -t nat -X ${redirect} 2>/dev/null
fi
exit 0
`;
  }
  return `set -e
iptables-restore -w --noflush <<'RULES'
${policyRestore(port, address, policy as EgressPolicy, false)}RULES
iptables -w -C ${jump} 2>/dev/null || iptables -w -A ${jump}
iptables -w -t nat -C ${natJump} 2>/dev/null || iptables -w -t nat -A ${natJump}
`;
}
