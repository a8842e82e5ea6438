/**
 * Builds the lab's network (see address-plan.ts for the picture): namespaces, veth pairs, bridges, addresses,
 * routes, forwarding and NAT, all inside namespaces the lab created. Veth pairs are created with both ends already
 * in their namespaces, so their names never appear in the root namespace; the one exception is the optional host
 * link.
 */
import type { AddressPlan } from './address-plan';
import { sandboxAddress } from './address-plan';
import { eipJumpRules, eipRestoreScript, type ElasticIpMapping } from './eip-nat';
import { FIXED_NODES, hostLinkName, namespaceName, sandboxNode } from './names';
import type { ProgressFn } from './progress';
import { inNamespace, must } from './run';

export interface TopologyOptions {
  lab: string;
  sandboxes: number;
  hostLink: boolean;
  plan: AddressPlan;
  eips: ElasticIpMapping[];
  progress: ProgressFn;
}

export interface Topology {
  namespaces: Record<string, string>;
  sandboxes: string[];
  hostLink?: { device: string; route: string; via: string };
}

/** Interface names inside the namespaces (each namespace has its own name space for links). */
export const IFACES = {
  publicBridge: 'pub',
  edgeToWeb: 'pub-web',
  edgeToSandboxHost: 'pub-sbhost',
  edgeToProxy: 'priv0',
  uplink: 'eth0',
  sandboxHostUplink: 'wan0',
  sandboxBridge: 'sb',
  sandboxHostToRoot: 'host0',
} as const;

const ipIn = (ns: string, ...args: string[]): Promise<string> => must(['ip', '-n', ns, ...args]);

async function sysctlIn(ns: string, key: string, value: string): Promise<void> {
  await must(inNamespace(ns, ['sysctl', '-q', '-w', `${key}=${value}`]));
}

async function iptablesIn(ns: string, args: string[]): Promise<void> {
  await must(inNamespace(ns, ['iptables', '-w', ...args]));
}

/** A veth pair whose ends are created directly in two namespaces. */
async function vethBetween(nsA: string, nameA: string, nsB: string, nameB: string): Promise<void> {
  await ipIn(nsA, 'link', 'add', nameA, 'type', 'veth', 'peer', 'name', nameB, 'netns', nsB);
  await ipIn(nsA, 'link', 'set', nameA, 'up');
  await ipIn(nsB, 'link', 'set', nameB, 'up');
}

/**
 * A bridge with a fixed MAC address: without one, Linux gives a bridge the lowest MAC of its ports, so a port added
 * later (a platform sandbox's veth) can change it under the neighbours, whose ARP entries for the bridge's address
 * then point nowhere until they expire.
 */
async function bridge(ns: string, name: string, address: string): Promise<void> {
  const [a, b, c, d] = address.split('/')[0]!.split('.').map(Number) as [number, number, number, number];
  const mac = ['02', a, b, c, d, 1].map((x) => (typeof x === 'number' ? x.toString(16).padStart(2, '0') : x)).join(':');
  await ipIn(ns, 'link', 'add', name, 'address', mac, 'type', 'bridge');
  await ipIn(ns, 'addr', 'add', address, 'dev', name);
  await ipIn(ns, 'link', 'set', name, 'up');
}

/** Makes `address` answer on the public segment: ARP for it reaches the edge, whose NAT then forwards it. */
export async function setEdgeAddresses(ns: string, add: string[], remove: string[]): Promise<void> {
  for (const a of remove) await ipIn(ns, 'addr', 'del', `${a}/32`, 'dev', IFACES.publicBridge).catch(() => undefined);
  for (const a of add) await ipIn(ns, 'addr', 'replace', `${a}/32`, 'dev', IFACES.publicBridge);
}

export async function applyElasticIps(edgeNs: string, mappings: ElasticIpMapping[]): Promise<void> {
  await must(inNamespace(edgeNs, ['iptables-restore', '-w', '--noflush']), { input: eipRestoreScript(mappings) });
}

export async function buildTopology(o: TopologyOptions): Promise<Topology> {
  const { plan, progress } = o;
  const sandboxes = Array.from({ length: o.sandboxes }, (_, i) => sandboxNode(i + 1));
  const namespaces: Record<string, string> = {};
  for (const node of [...FIXED_NODES, ...sandboxes]) namespaces[node] = namespaceName(o.lab, node);
  const ns = (node: string): string => namespaces[node]!;

  for (const [node, name] of Object.entries(namespaces)) {
    await must(['ip', 'netns', 'add', name]);
    await ipIn(name, 'link', 'set', 'lo', 'up');
    progress({ step: 'topology', message: `namespace ${name} (${node})` });
  }

  // The edge: public segment as a bridge, the proxy's private subnet on a veth, forwarding on.
  const edge = ns('inet');
  await bridge(edge, IFACES.publicBridge, `${plan.edgePublic}/${plan.publicPrefix}`);
  await sysctlIn(edge, 'net.ipv4.ip_forward', '1');
  progress({ step: 'topology', message: `edge router in ${edge}: public segment ${plan.edgePublic}/${plan.publicPrefix}` });

  await vethBetween(edge, IFACES.edgeToWeb, ns('web'), IFACES.uplink);
  await ipIn(edge, 'link', 'set', IFACES.edgeToWeb, 'master', IFACES.publicBridge);
  await ipIn(ns('web'), 'addr', 'add', `${plan.web}/${plan.publicPrefix}`, 'dev', IFACES.uplink);
  await ipIn(ns('web'), 'route', 'add', 'default', 'via', plan.edgePublic);
  progress({ step: 'topology', message: `link ${edge}:${IFACES.edgeToWeb} <-> ${ns('web')}:${IFACES.uplink} (internet host ${plan.web})` });

  await vethBetween(edge, IFACES.edgeToProxy, ns('proxy'), IFACES.uplink);
  await ipIn(edge, 'addr', 'add', `${plan.edgePrivate}/${plan.proxyPrefix}`, 'dev', IFACES.edgeToProxy);
  await ipIn(edge, 'addr', 'add', `${plan.metadata}/32`, 'dev', IFACES.edgeToProxy);
  await ipIn(ns('proxy'), 'addr', 'add', `${plan.proxyPrimary}/${plan.proxyPrefix}`, 'dev', IFACES.uplink);
  await ipIn(ns('proxy'), 'route', 'add', 'default', 'via', plan.edgePrivate);
  progress({
    step: 'topology',
    message: `link ${edge}:${IFACES.edgeToProxy} <-> ${ns('proxy')}:${IFACES.uplink} (proxy subnet ${plan.proxySubnet}, proxy ${plan.proxyPrimary}, metadata ${plan.metadata} on the edge)`,
  });

  // The restore creates the chains; the jumps into them come after.
  await applyElasticIps(edge, o.eips);
  for (const rule of eipJumpRules()) await iptablesIn(edge, rule);
  await setEdgeAddresses(
    edge,
    o.eips.map((m) => m.publicAddress),
    [],
  );
  for (const m of o.eips)
    progress({ step: 'topology', message: `Elastic IP ${m.publicAddress} <-> ${m.privateAddress} (1:1 NAT at the edge)` });

  // The sandbox host: public uplink, a bridge for the sandboxes, NAT of the sandbox subnet to its public address.
  const host = ns('sbhost');
  await vethBetween(edge, IFACES.edgeToSandboxHost, host, IFACES.sandboxHostUplink);
  await ipIn(edge, 'link', 'set', IFACES.edgeToSandboxHost, 'master', IFACES.publicBridge);
  await ipIn(host, 'addr', 'add', `${plan.sandboxHostPublic}/${plan.publicPrefix}`, 'dev', IFACES.sandboxHostUplink);
  await ipIn(host, 'route', 'add', 'default', 'via', plan.edgePublic);
  await bridge(host, IFACES.sandboxBridge, `${plan.sandboxGateway}/${plan.sandboxPrefix}`);
  await sysctlIn(host, 'net.ipv4.ip_forward', '1');
  await iptablesIn(host, ['-t', 'nat', '-A', 'POSTROUTING', '-s', plan.sandboxSubnet, '-o', IFACES.sandboxHostUplink, '-j', 'MASQUERADE']);
  progress({
    step: 'topology',
    message: `sandbox host ${host}: public ${plan.sandboxHostPublic}, sandbox subnet ${plan.sandboxSubnet} behind NAT`,
  });

  for (const [i, node] of sandboxes.entries()) {
    const address = sandboxAddress(i + 1, plan);
    await vethBetween(host, node, ns(node), IFACES.uplink);
    await ipIn(host, 'link', 'set', node, 'master', IFACES.sandboxBridge);
    await ipIn(ns(node), 'addr', 'add', `${address}/${plan.sandboxPrefix}`, 'dev', IFACES.uplink);
    await ipIn(ns(node), 'route', 'add', 'default', 'via', plan.sandboxGateway);
    progress({ step: 'topology', message: `sandbox ${node} in ${ns(node)}: ${address}` });
  }

  let hostLink: Topology['hostLink'];
  if (o.hostLink) {
    const device = hostLinkName(o.lab);
    const existing = await must(['ip', 'route', 'show', plan.sandboxSubnet]);
    if (existing.trim() !== '') {
      throw new Error(
        `host link: the root namespace already routes ${plan.sandboxSubnet} (${existing.trim()}); is another lab up with a host link?`,
      );
    }
    await must(['ip', 'link', 'add', device, 'type', 'veth', 'peer', 'name', IFACES.sandboxHostToRoot, 'netns', host]);
    await must(['ip', 'addr', 'add', `${plan.hostLinkRoot}/${plan.hostLinkPrefix}`, 'dev', device]);
    await must(['ip', 'link', 'set', device, 'up']);
    await ipIn(host, 'addr', 'add', `${plan.hostLinkLab}/${plan.hostLinkPrefix}`, 'dev', IFACES.sandboxHostToRoot);
    await ipIn(host, 'link', 'set', IFACES.sandboxHostToRoot, 'up');
    await must(['ip', 'route', 'add', plan.sandboxSubnet, 'via', plan.hostLinkLab, 'dev', device]);
    hostLink = { device, route: plan.sandboxSubnet, via: plan.hostLinkLab };
    progress({
      step: 'topology',
      message: `host link ${device} (root ${plan.hostLinkRoot}) -> ${host}; route ${plan.sandboxSubnet} via ${plan.hostLinkLab}`,
    });
  }
  return { namespaces, sandboxes, ...(hostLink ? { hostLink } : {}) };
}
