/**
 * A sandbox's egress policy (the E2B SDK's `allowOut` / `denyOut`, `allowInternetAccess: false` being a deny of
 * 0.0.0.0/0), as iptables rules in the bridge namespace, outside the sandbox. Pure.
 *
 * Allow beats deny: a destination in `allowOut` returns to the guard (which still drops private and link-local
 * space: an allow rule never opens the host's networks), one in `denyOut` is rejected, anything else returns too.
 * DNS to the sandbox's resolvers passes before any policy (guard-rules.ts).
 */
import { GUARD_CHAINS } from './guard-rules';

export interface EgressPolicy {
  /** IPv4 networks as a.b.c.d/n, host bits clear. */
  allowOut: string[];
  denyOut: string[];
}

export function isEmptyPolicy(p: EgressPolicy | undefined): boolean {
  return p === undefined || (p.allowOut.length === 0 && p.denyOut.length === 0);
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

/** The sandbox's own chain, named after its bridge port (iptables chain names are short). */
export function policyChain(port: string): string {
  return `SKIT-P-${port}`;
}

/**
 * A shell script (run in the bridge namespace) that puts the policy in place for the sandbox at `address`: the
 * chain's rules are replaced in one iptables-restore transaction, so an update never leaves a moment without rules.
 * An empty policy removes the chain and its jump.
 */
export function policyScript(port: string, address: string, policy: EgressPolicy | undefined): string {
  const chain = policyChain(port);
  const jump = `${GUARD_CHAINS.policy} -s ${address}/32 -j ${chain}`;
  if (isEmptyPolicy(policy)) {
    return `while iptables -w -D ${jump} 2>/dev/null; do :; done
iptables -w -F ${chain} 2>/dev/null
iptables -w -X ${chain} 2>/dev/null
exit 0
`;
  }
  const p = policy as EgressPolicy;
  const rules = [
    '*filter',
    `:${chain} - [0:0]`,
    ...p.allowOut.map((c) => `-A ${chain} -d ${c} -j RETURN`),
    ...p.denyOut.map((c) => `-A ${chain} -d ${c} -j REJECT --reject-with icmp-admin-prohibited`),
    'COMMIT',
  ];
  return `set -e
iptables-restore -w --noflush <<'RULES'
${rules.join('\n')}
RULES
iptables -w -C ${jump} 2>/dev/null || iptables -w -A ${jump}
`;
}
