/**
 * The rules that fence sandboxes in, as text for the tools that load them. Pure. They live in the namespace that
 * holds the sandboxes' bridge (the lab's sandbox host, or the platform's standalone `<instance>.host` on a single
 * machine or an AWS host), which the kit made and no sandbox can enter, so the same code runs everywhere.
 *
 * - L2, per sandbox port (nftables, bridge family): frames leave a port only with the sandbox's own MAC and IPv4
 *   address (ARP and IP alike), and only IPv4 and ARP at all, so no sandbox can answer ARP for another's address,
 *   use its MAC or address, or speak IPv6. The port itself is isolated (no frame to another sandbox port), does not
 *   learn, and is not flooded; the bridge knows each sandbox's MAC statically and the gateway each address's MAC
 *   permanently. The rules are the bridge's, loaded once; a port is one element in each of two sets (its name; its
 *   name, MAC and address), so an attach, a detach and every frame cost the same however many sandboxes run.
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

/** The L2 guard's nftables table (bridge family) in the bridge's namespace, and its two sets. */
export const L2_GUARD = {
  table: 'sandbox_kit_ports',
  /** The name of every sandbox port: frames from these are guarded. */
  ports: 'ports',
  /** Port name . MAC . IPv4 address: what each port may send from. */
  bound: 'bound',
} as const;

/**
 * nft input for the L2 guard: for a frame coming in from a port in `ports` (bridged on, or to the bridge itself),
 * IPv4 passes when its port, source MAC and source address are an element of `bound`; ARP for IPv4 over Ethernet
 * when its port with both its source MAC and its sender MAC, each with its sender address, are; anything else is
 * dropped. Idempotent: the chains are emptied and refilled in the same transaction, the sets' elements kept (a restart
 * keeps the running sandboxes' ports guarded throughout).
 */
function l2GuardRules(): string {
  const { table, ports, bound } = L2_GUARD;
  const t = `bridge ${table}`;
  return [
    `add table ${t}`,
    `add set ${t} ${ports} { type ifname; }`,
    `add set ${t} ${bound} { type ifname . ether_addr . ipv4_addr; }`,
    `add chain ${t} guard`,
    `flush chain ${t} guard`,
    `add rule ${t} guard ether type ip iifname . ether saddr . ip saddr @${bound} return`,
    `add rule ${t} guard ether type arp arp htype 1 arp ptype ip arp hlen 6 arp plen 4 iifname . ether saddr . arp saddr ip @${bound} iifname . arp saddr ether . arp saddr ip @${bound} return`,
    `add rule ${t} guard drop`,
    ...['input', 'forward'].flatMap((hook) => [
      `add chain ${t} ${hook} { type filter hook ${hook} priority filter; policy accept; }`,
      `flush chain ${t} ${hook}`,
      `add rule ${t} ${hook} iifname @${ports} jump guard`,
    ]),
    '',
  ].join('\n');
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
nft -f - <<'RULES'
${l2GuardRules()}RULES
sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 net.ipv4.ip_forward=1
`;
}

export interface PortFacts {
  /** The bridge-side veth of the sandbox. */
  port: string;
  mac: string;
  address: string;
}

/** Throws unless `port` is a link name and each of `bound` a MAC and an IPv4 address: they go into nft's input. */
function checkPort(port: string, bound: ReadonlyArray<Omit<PortFacts, 'port'>>): void {
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(port)) throw new Error(`invalid port name ${JSON.stringify(port)}`);
  const bad = bound.find((b) => !/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(b.mac) || !/^\d{1,3}(\.\d{1,3}){3}$/.test(b.address));
  if (bad) throw new Error(`invalid MAC or IPv4 address for port ${port}: ${JSON.stringify(bad)}`);
}

/**
 * A port's elements of the L2 guard's sets as nft writes them, each as `<set> { <element> }`: its name in `ports`,
 * and for each of `bound` its name, MAC and address in `bound`.
 */
function portElements(port: string, bound: ReadonlyArray<Omit<PortFacts, 'port'>>): string[] {
  checkPort(port, bound);
  return [`${L2_GUARD.ports} { "${port}" }`, ...bound.map((b) => `${L2_GUARD.bound} { "${port}" . ${b.mac} . ${b.address} }`)];
}

const elementOps = (verb: 'add' | 'delete', elements: string[]) =>
  elements.map((e) => `${verb} element bridge ${L2_GUARD.table} ${e}\n`).join('');

/** nft input binding a port to its sandbox's MAC and address (l2GuardRules: IPv4 and ARP only, nothing else). */
export function portGuardRules({ port, ...bound }: PortFacts): string {
  return elementOps('add', portElements(port, [bound]));
}

/**
 * nft input unbinding a port (its name, and its MAC and address as each of `bound` gives them), whether or not it is
 * bound: each element is added (nothing if it is there) then deleted, in one transaction, since nft 1.0.6 has no
 * delete that tolerates a missing element.
 */
export function portUnguardRules(port: string, bound: ReadonlyArray<Omit<PortFacts, 'port'>>): string {
  const elements = portElements(port, bound);
  return elementOps('add', elements) + elementOps('delete', elements);
}

/** The MAC and address each element of the `bound` set gives `port`, from `nft -j list set` of it. Pure. */
export function boundOf(listing: string, port: string): Array<Omit<PortFacts, 'port'>> {
  const parsed = JSON.parse(listing) as { nftables?: Array<{ set?: { elem?: Array<{ concat?: unknown[] }> } }> };
  return (parsed.nftables ?? [])
    .flatMap((entry) => entry.set?.elem ?? [])
    .flatMap((e) => {
      const [name, mac, address] = e.concat ?? [];
      return name === port && typeof mac === 'string' && typeof address === 'string' ? [{ mac, address }] : [];
    });
}

/**
 * How a sandbox's port is plugged in, in three commands run in the bridge namespace, in this order (each process
 * spawned costs a create several milliseconds, and each `ip` or `bridge` run may read every link of the namespace):
 * - `rules`, for `nft -f`: the port's elements of the L2 guard (portGuardRules). They name the port, so they go in
 *   before the port exists, and nothing of the sandbox ever passes without them.
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

/**
 * argv of the port-plug program (port-plug.c) doing what attachPortCommands's three commands do, in the same order,
 * in the namespace at `netnsPath`, with one process and netlink alone (none of it reads every link or rule first).
 */
export function portPlugArgv(
  program: string,
  netnsPath: string,
  facts: PortFacts & { peer: string; alias: string },
  bridge: string,
): string[] {
  checkPort(facts.port, [facts]);
  const { table, ports, bound } = L2_GUARD;
  return [program, netnsPath, table, ports, bound, bridge, facts.port, facts.peer, facts.mac, facts.address, facts.alias];
}

/**
 * The reverse of attachPortCommands; every step tolerates what is already gone. `bound`: the port's elements of the
 * L2 guard (its MAC and address; read from the `bound` set when the port's alias is gone), unbound after the port is.
 */
export function detachPortScript(port: string, bound: ReadonlyArray<Omit<PortFacts, 'port'>>, bridge: string): string {
  return `ip link del ${port} 2>/dev/null
${bound.map((b) => `ip neigh del ${b.address} dev ${bridge} 2>/dev/null\n`).join('')}nft -f - 2>/dev/null <<'RULES'
${portUnguardRules(port, bound)}RULES
exit 0
`;
}
