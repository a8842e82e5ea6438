/**
 * The rules that fence sandboxes in, as text for the tools that load them. Pure. They live in the namespace that
 * holds the sandboxes' bridge (the lab's sandbox host, or the platform's standalone `<instance>.host` on a single
 * machine or an AWS host), which the kit made and no sandbox can enter, so the same code runs everywhere.
 *
 * - L2, per sandbox port (ebtables): frames leave a port only with the sandbox's own MAC and IPv4 address (ARP and
 *   IP alike), and only IPv4 and ARP at all, so no sandbox can answer ARP for another's address, use its MAC or
 *   address, or speak IPv6. The port itself is isolated (no frame to another sandbox port), does not learn, and is
 *   not flooded; the bridge knows each sandbox's MAC statically and the gateway each address's MAC permanently.
 * - L3, for the whole bridge (iptables): nothing from a sandbox to another sandbox (even routed via the gateway) or
 *   to the bridge namespace itself; DNS only to the resolvers the sandboxes are given; then each sandbox's egress
 *   policy (egress-policy.ts); then no private, loopback, link-local or host network; then out. New connections into
 *   sandboxes only from the root side's link (the platform and the gateway).
 * - nat, for the whole bridge: the hook where a sandbox's TCP is redirected to the egress relay when its policy
 *   names domains or a proxy (DNS to the resolvers never is), and the one door into the bridge namespace that
 *   redirect opens (the relay's port, for redirected connections only).
 */

export const GUARD_CHAINS = {
  forward: 'SKIT-FWD',
  input: 'SKIT-IN',
  /** Per-sandbox egress policies hang here (one jump per sandbox with a policy); never flushed by the guard. */
  policy: 'SKIT-POLICY',
  /** nat PREROUTING: what of the sandboxes' TCP is never redirected (DNS to their resolvers), then SKIT-REDIRECT. */
  prerouting: 'SKIT-PRE',
  /** Per-sandbox jumps into their redirect chains (egress-policy.ts); never flushed by the guard. */
  redirect: 'SKIT-REDIRECT',
} as const;

/**
 * The port the egress relay (egress-relay/) listens on in the bridge namespace; only connections redirected there
 * reach it (a sandbox dialling it itself is dropped like any other call to the bridge namespace).
 */
export const RELAY_PORT = 15001;

export interface GuardOptions {
  /** The bridge the sandboxes' ports are on, e.g. sb. */
  bridge: string;
  /** The link from the root side (the platform and the gateway): the one way new connections come in. */
  rootLink: string;
  /** Resolvers the sandboxes' resolv.conf names: port 53 to them passes. */
  dnsResolvers: readonly string[];
  /** IPv4 destinations no sandbox reaches (private space, link-local, loopback, the host's networks). */
  blocked: readonly string[];
}

/** A shell script (run in the bridge namespace) that loads the guard; idempotent, other chains untouched. */
export function guardScript(o: GuardOptions): string {
  const { forward: FWD, input: IN, policy: POLICY, prerouting: PRE, redirect: REDIRECT } = GUARD_CHAINS;
  const rules = [
    '*filter',
    `:${FWD} - [0:0]`,
    `:${IN} - [0:0]`,
    `-A ${IN} -i ${o.bridge} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT`,
    `-A ${IN} -i ${o.bridge} -p tcp --dport ${RELAY_PORT} -m conntrack --ctstate DNAT -j ACCEPT`,
    // The relay is for redirected sandbox connections only, not for anything on the namespace's other links.
    `-A ${IN} -p tcp --dport ${RELAY_PORT} -j DROP`,
    `-A ${IN} -i ${o.bridge} -j DROP`,
    `-A ${FWD} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT`,
    `-A ${FWD} -i ${o.bridge} -o ${o.bridge} -j DROP`,
    ...o.dnsResolvers.flatMap((r) => ['udp', 'tcp'].map((p) => `-A ${FWD} -i ${o.bridge} -d ${r}/32 -p ${p} --dport 53 -j ACCEPT`)),
    `-A ${FWD} -i ${o.bridge} -j ${POLICY}`,
    ...o.blocked.map((b) => `-A ${FWD} -i ${o.bridge} -d ${b} -j DROP`),
    `-A ${FWD} -i ${o.bridge} -j ACCEPT`,
    `-A ${FWD} -i ${o.rootLink} -o ${o.bridge} -p tcp -m conntrack --ctstate NEW -j ACCEPT`,
    `-A ${FWD} -o ${o.bridge} -j DROP`,
    'COMMIT',
    '*nat',
    `:${PRE} - [0:0]`,
    ...o.dnsResolvers.map((r) => `-A ${PRE} -i ${o.bridge} -d ${r}/32 -p tcp --dport 53 -j RETURN`),
    `-A ${PRE} -i ${o.bridge} -j ${REDIRECT}`,
    'COMMIT',
  ];
  return `set -e
iptables -w -N ${POLICY} 2>/dev/null || true
iptables -w -t nat -N ${REDIRECT} 2>/dev/null || true
iptables-restore -w --noflush <<'RULES'
${rules.join('\n')}
RULES
iptables -w -C FORWARD -j ${FWD} 2>/dev/null || iptables -w -I FORWARD 1 -j ${FWD}
iptables -w -C INPUT -j ${IN} 2>/dev/null || iptables -w -I INPUT 1 -j ${IN}
iptables -w -t nat -C PREROUTING -j ${PRE} 2>/dev/null || iptables -w -t nat -I PREROUTING 1 -j ${PRE}
sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 net.ipv4.ip_forward=1
`;
}

export interface PortFacts {
  /** The bridge-side veth of the sandbox. */
  port: string;
  mac: string;
  address: string;
}

function portChain(port: string): string {
  return `SKIT-${port}`;
}

/** ebtables-restore input binding a port to its sandbox's MAC and address (IPv4 and ARP only). */
export function portGuardRules({ port, mac, address }: PortFacts): string {
  const chain = portChain(port);
  return [
    '*filter',
    `:${chain} RETURN`,
    `-A INPUT -i ${port} -j ${chain}`,
    `-A FORWARD -i ${port} -j ${chain}`,
    `-A ${chain} -s ! ${mac} -j DROP`,
    `-A ${chain} -p IPv4 --ip-src ! ${address} -j DROP`,
    `-A ${chain} -p ARP --arp-ip-src ! ${address} -j DROP`,
    `-A ${chain} -p ARP --arp-mac-src ! ${mac} -j DROP`,
    `-A ${chain} -p IPv4 -j RETURN`,
    `-A ${chain} -p ARP -j RETURN`,
    `-A ${chain} -j DROP`,
    'COMMIT',
    '',
  ].join('\n');
}

/**
 * How a sandbox's port is plugged in, in three commands run in the bridge namespace, in this order (each process
 * spawned costs a create several milliseconds, and each `ip` or `bridge` run may read every link of the namespace):
 * - `rules`, for ebtables-restore: the port's L2 rules (portGuardRules). They name the port, so they go in before the
 *   port exists, and nothing of the sandbox ever passes without them.
 * - `links`, for `ip -b`: the veth pair made (the sandbox's end parked, down), named, put on the bridge as an isolated
 *   port that neither learns nor is flooded, the bridge's permanent ARP entry for the address, and the port up. Up,
 *   it still reaches nothing: its peer is down until the sandbox's namespace takes it (join-link.ts).
 * - `fdb`, for `bridge -b`: the bridge's static knowledge of the MAC, the only way frames reach the port.
 */
export function attachPortCommands(
  facts: PortFacts & { peer: string; alias: string },
  bridge: string,
): { rules: string; links: string; fdb: string } {
  const { port, peer, mac, address, alias } = facts;
  return {
    rules: portGuardRules(facts),
    links: [
      `link add ${port} type veth peer name ${peer} address ${mac}`,
      `link set ${port} alias "${alias}"`,
      `link set ${port} master ${bridge}`,
      `link set dev ${port} type bridge_slave isolated on learning off flood off mcast_flood off`,
      `neigh replace ${address} lladdr ${mac} dev ${bridge} nud permanent`,
      `link set ${port} up`,
      '',
    ].join('\n'),
    fdb: `fdb replace ${mac} dev ${port} master static\n`,
  };
}

/** The reverse of attachPortScript; every step tolerates what is already gone. */
export function detachPortScript(port: string, address: string | undefined, bridge: string): string {
  const chain = portChain(port);
  return `ebtables -D INPUT -i ${port} -j ${chain} 2>/dev/null
ebtables -D FORWARD -i ${port} -j ${chain} 2>/dev/null
ebtables -F ${chain} 2>/dev/null
ebtables -X ${chain} 2>/dev/null
ip link del ${port} 2>/dev/null
${address ? `ip neigh del ${address} dev ${bridge} 2>/dev/null\n` : ''}exit 0
`;
}
