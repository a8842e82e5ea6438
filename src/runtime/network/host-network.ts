/**
 * A standalone sandbox network for tests and for a platform run without the lab: a "sandbox host" namespace
 * `<name>.host` with the bridge `sb` on a free /24 of 198.19.0.0/16 (or on a given subnet: a fleet host's delegated
 * prefix, which the VPC routes to it), and ONE veth link from the root namespace into that namespace, so processes in
 * the root namespace (platform, gateway, tests) reach the agents. The bridge takes the subnet's first host address
 * (the sandboxes' gateway), the root side its last. The link is routed, not bridged: the namespace answers ARP for
 * each side on the other's behalf (proxy ARP), so every packet between a sandbox and the root side passes the
 * namespace's guard (guard-rules.ts) like any other. Nothing else in the root namespace changes: no sysctl, no
 * firewall rule, no forwarding.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../../util/exec';
import { checkInstanceName } from '../instance';
import type { SandboxNetwork } from '../types';
import { BridgeNetwork, macFor, ROOT_LINK } from './bridge-network';
import { intToIp, ipToInt, parseSubnet, type Subnet } from './ipv4';
import { stopRelay } from './relay-process';
import { inNetns, NETNS_DIR } from './in-netns';

export const STANDALONE_RANGE = '198.19.0.0/16';
const BRIDGE = 'sb';
const HOST_SIDE = ROOT_LINK;

export interface SandboxHostNetwork {
  network: SandboxNetwork & { list: BridgeNetwork['list'] };
  /** The sandbox subnet, e.g. 198.19.37.0/24. */
  subnet: string;
  gateway: string;
  /** The root namespace's own address on the subnet. */
  hostAddress: string;
  namespace: string;
  /** Detaches every sandbox and removes the namespace and the root link. Idempotent. */
  close(): Promise<void>;
}

export function hostNamespaceName(name: string): string {
  return `${name}.host`;
}

/** The root-namespace end of the link: derived from the name (so cleanup finds it), 15 characters at most. */
export function rootLinkName(name: string): string {
  return `skh${createHash('sha256').update(name).digest('hex').slice(0, 10)}`;
}

/** Third octets of 198.19.x.0/24 that the root namespace already routes or addresses. */
async function usedThirdOctets(): Promise<Set<number>> {
  const routes = JSON.parse((await execOk(['ip', '-j', 'route', 'show', 'table', 'all'])).trim() || '[]') as Array<{
    dst?: string;
    prefsrc?: string;
  }>;
  const used = new Set<number>();
  for (const r of routes) {
    for (const text of [r.dst, r.prefsrc]) {
      const m = text ? /^198\.19\.(\d+)\./.exec(text) : null;
      if (m) used.add(Number(m[1]));
    }
  }
  return used;
}

export interface SandboxHostNetworkOptions {
  /** The sandboxes' subnet (a /30 or larger), e.g. a fleet host's delegated 10.0.1.16/28; default a free /24 of 198.19.0.0/16. */
  subnet?: string;
  /**
   * Let the sandboxes out: the namespace forwards, and sends what is not on the subnet to the root side, where the
   * host's rules (sandbox-network.sh) take it. Without it (tests, a platform beside the lab) sandboxes reach only
   * the root namespace's own address.
   */
  routeOut?: boolean;
  /** Resolvers the sandboxes may reach on port 53 (default the host's: see BridgeNetworkOptions). */
  dnsResolvers?: string[];
}

/** Default route to the root side (idempotent). */
async function routeOut(handle: SandboxHostNetwork): Promise<void> {
  await execOk(inNetns(handle.namespace, ['ip', 'route', 'replace', 'default', 'via', handle.hostAddress]));
}

/**
 * The root link as a routed link (idempotent, also for a namespace an older run made with the link on the bridge):
 * off the bridge, the root side's address routed to it, forwarding and proxy ARP on in the namespace. Proxy ARP
 * answers at once (`proxy_delay` 0): Linux otherwise holds each proxied answer to a broadcast request for a random
 * time up to 0.8 s, and the first call to every new sandbox (the agent's /health, both ways) waited that long.
 */
async function routeRootLink(namespace: string, hostAddress: string): Promise<void> {
  await execOk(inNetns(namespace, ['ip', '-b', '-']), {
    input: [`link set ${HOST_SIDE} nomaster`, `link set ${HOST_SIDE} up`, `route replace ${hostAddress}/32 dev ${HOST_SIDE}`, ''].join(
      '\n',
    ),
  });
  await execOk([
    'ip',
    'netns',
    'exec',
    namespace,
    'sysctl',
    '-q',
    '-w',
    'net.ipv4.ip_forward=1',
    `net.ipv4.conf.${BRIDGE}.proxy_arp=1`,
    `net.ipv4.conf.${HOST_SIDE}.proxy_arp=1`,
    `net.ipv4.neigh.${BRIDGE}.proxy_delay=0`,
    `net.ipv4.neigh.${HOST_SIDE}.proxy_delay=0`,
  ]);
}

export async function createSandboxHostNetwork(name: string, options: SandboxHostNetworkOptions = {}): Promise<SandboxHostNetwork> {
  checkInstanceName(name);
  const namespace = hostNamespaceName(name);
  const link = rootLinkName(name);
  if (fs.existsSync(`${NETNS_DIR}/${namespace}`))
    throw new Error(`sandbox host network ${name} exists already (${NETNS_DIR}/${namespace}); close it or clean up leftovers first`);
  let chosen: Subnet;
  if (options.subnet !== undefined) {
    chosen = parseSubnet(options.subnet);
  } else {
    const used = await usedThirdOctets();
    const free = Array.from({ length: 254 }, (_, i) => i + 1).filter((x) => !used.has(x));
    if (free.length === 0) throw new Error(`no free /24 left in ${STANDALONE_RANGE}`);
    chosen = parseSubnet(`198.19.${free[Math.floor(Math.random() * free.length)]!}.0/24`);
  }
  const handle = hostNetworkHandle(name, chosen, options.dnsResolvers);
  const { subnet, gateway, hostAddress, close } = handle;
  const prefix = chosen.prefix;
  try {
    await execOk(['ip', 'netns', 'add', namespace]);
    // A fixed bridge MAC: Linux otherwise gives a bridge the lowest MAC of its ports, so a sandbox's port coming or
    // going could change it under the other sandboxes, whose ARP entries for the gateway would then point nowhere.
    await execOk(inNetns(namespace, ['ip', '-b', '-']), {
      input: [
        'link set lo up',
        `link add ${BRIDGE} address ${macFor(gateway)} type bridge`,
        `addr add ${gateway}/${prefix} dev ${BRIDGE}`,
        `link set ${BRIDGE} up`,
        '',
      ].join('\n'),
    });
    await execOk(['ip', 'link', 'add', link, 'type', 'veth', 'peer', 'name', HOST_SIDE, 'netns', namespace]);
    await routeRootLink(namespace, hostAddress);
    await execOk(['ip', '-b', '-'], { input: [`addr add ${hostAddress}/${prefix} dev ${link}`, `link set ${link} up`, ''].join('\n') });
    const routes = JSON.parse((await execOk(['ip', '-j', 'route', 'show', subnet])).trim() || '[]') as Array<{ dev?: string }>;
    if (routes.length !== 1 || routes[0]!.dev !== link) {
      throw new Error(`${subnet} is routed elsewhere too (${JSON.stringify(routes)}); another network took it meanwhile`);
    }
  } catch (err) {
    await close();
    throw new Error(`cannot create sandbox host network ${name}: ${(err as Error).message}`);
  }
  return handle;
}

/** The bridge's and the root side's addresses on a subnet: its first and its last host address. */
export function hostNetworkAddresses(s: Subnet): { subnet: string; gateway: string; hostAddress: string } {
  const size = 2 ** (32 - s.prefix);
  return { subnet: `${intToIp(s.network)}/${s.prefix}`, gateway: intToIp(s.network + 1), hostAddress: intToIp(s.network + size - 2) };
}

/** Sandboxes a subnet holds: its addresses less network, broadcast, the bridge's and the root side's; 0 without one. */
export function subnetCapacity(subnet: string | undefined): number {
  if (subnet === undefined) return 0;
  return 2 ** (32 - parseSubnet(subnet).prefix) - 4;
}

/** The handle of the standalone network `name` on `s` (made or found). */
function hostNetworkHandle(name: string, s: Subnet, dnsResolvers?: string[]): SandboxHostNetwork {
  const namespace = hostNamespaceName(name);
  const { subnet, gateway, hostAddress } = hostNetworkAddresses(s);
  const network = new BridgeNetwork({
    bridgeNamespace: namespace,
    bridge: BRIDGE,
    subnet,
    gateway,
    netnsPrefix: `${name}-`,
    reserved: [hostAddress],
    ...(dnsResolvers !== undefined ? { dnsResolvers } : {}),
  });
  const close = async (): Promise<void> => {
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) {
      for (const id of (await network.list()).keys()) await network.detach(id);
    }
    stopRelay(namespace);
    await exec(['ip', 'link', 'del', rootLinkName(name)]);
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) await exec(['ip', 'netns', 'del', namespace]);
  };
  return { network, subnet, gateway, hostAddress, namespace, close };
}

/**
 * The standalone network `name` as a previous run left it (a restarted platform's sandboxes still live on it), read
 * back from its bridge's address; undefined when there is none.
 */
export async function reopenSandboxHostNetwork(name: string, dnsResolvers?: string[]): Promise<SandboxHostNetwork | undefined> {
  checkInstanceName(name);
  const namespace = hostNamespaceName(name);
  if (!fs.existsSync(`${NETNS_DIR}/${namespace}`)) return undefined;
  const out = await execOk(inNetns(namespace, ['ip', '-j', 'addr', 'show', 'dev', BRIDGE]));
  const info = (JSON.parse(out.trim() || '[]') as Array<{ addr_info?: Array<{ family: string; local: string; prefixlen: number }> }>)[0];
  const v4 = info?.addr_info?.find((a) => a.family === 'inet');
  let found: Subnet | undefined;
  if (v4) {
    const size = 2 ** (32 - v4.prefixlen);
    const candidate = { network: ipToInt(v4.local) - 1, prefix: v4.prefixlen };
    if (candidate.network >= 0 && candidate.network % size === 0) found = candidate;
  }
  if (!found) {
    throw new Error(
      `sandbox host network ${name}: the bridge ${BRIDGE} in ${namespace} does not hold its subnet's first address; remove it (ip netns del ${namespace}) and start again`,
    );
  }
  return hostNetworkHandle(name, found, dnsResolvers);
}

/**
 * The standalone network `name`: the existing one when a previous run left it, else a new one. A given subnet must be
 * the one found (a host's delegated prefix does not change under its sandboxes).
 */
export async function openSandboxHostNetwork(name: string, options: SandboxHostNetworkOptions = {}): Promise<SandboxHostNetwork> {
  const found = await reopenSandboxHostNetwork(name, options.dnsResolvers);
  if (found && options.subnet !== undefined && hostNetworkAddresses(parseSubnet(options.subnet)).subnet !== found.subnet) {
    throw new Error(
      `sandbox host network ${name} is on ${found.subnet}, not ${options.subnet}: stop its sandboxes (sandbox-kit down, or ip netns del ${found.namespace}) to move it`,
    );
  }
  const handle = found ?? (await createSandboxHostNetwork(name, options));
  if (found) await routeRootLink(found.namespace, found.hostAddress);
  if (options.routeOut) await routeOut(handle);
  return handle;
}
