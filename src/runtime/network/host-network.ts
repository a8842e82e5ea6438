/**
 * A standalone sandbox network for tests and for a platform run without the lab: a "sandbox host" namespace
 * `<name>.host` with the bridge `sb` on a free /24 of 198.19.0.0/16, and ONE veth link from the root namespace
 * onto that bridge (root side .254), so processes in the root namespace (platform, gateway, tests) reach the
 * agents directly. Nothing else in the root namespace changes: no sysctl, no firewall rule, no forwarding.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../exec';
import { checkInstanceName } from '../instance';
import type { SandboxNetwork } from '../types';
import { BridgeNetwork, NETNS_DIR } from './bridge-network';

export const STANDALONE_RANGE = '198.19.0.0/16';
const BRIDGE = 'sb';
const HOST_SIDE = 'host0';

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
  const routes = JSON.parse((await execOk(['ip', '-j', 'route', 'show', 'table', 'all'])).trim() || '[]') as Array<{ dst?: string; prefsrc?: string }>;
  const used = new Set<number>();
  for (const r of routes) {
    for (const text of [r.dst, r.prefsrc]) {
      const m = text ? /^198\.19\.(\d+)\./.exec(text) : null;
      if (m) used.add(Number(m[1]));
    }
  }
  return used;
}

export async function createSandboxHostNetwork(name: string): Promise<SandboxHostNetwork> {
  checkInstanceName(name);
  const namespace = hostNamespaceName(name);
  const link = rootLinkName(name);
  if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) throw new Error(`sandbox host network ${name} exists already (${NETNS_DIR}/${namespace}); close it or clean up leftovers first`);
  const used = await usedThirdOctets();
  const free = Array.from({ length: 254 }, (_, i) => i + 1).filter((x) => !used.has(x));
  if (free.length === 0) throw new Error(`no free /24 left in ${STANDALONE_RANGE}`);
  const x = free[Math.floor(Math.random() * free.length)]!;
  const subnet = `198.19.${x}.0/24`;
  const gateway = `198.19.${x}.1`;
  const hostAddress = `198.19.${x}.254`;

  const network = new BridgeNetwork({ bridgeNamespace: namespace, bridge: BRIDGE, subnet, gateway, netnsPrefix: `${name}-`, reserved: [hostAddress] });
  const close = async (): Promise<void> => {
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) {
      for (const id of (await network.list()).keys()) await network.detach(id);
    }
    await exec(['ip', 'link', 'del', link]);
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) await exec(['ip', 'netns', 'del', namespace]);
  };
  try {
    await execOk(['ip', 'netns', 'add', namespace]);
    await execOk(['ip', '-n', namespace, '-b', '-'], {
      input: ['link set lo up', `link add ${BRIDGE} type bridge`, `addr add ${gateway}/24 dev ${BRIDGE}`, `link set ${BRIDGE} up`, ''].join('\n'),
    });
    await execOk(['ip', 'link', 'add', link, 'type', 'veth', 'peer', 'name', HOST_SIDE, 'netns', namespace]);
    await execOk(['ip', '-n', namespace, '-b', '-'], { input: [`link set ${HOST_SIDE} master ${BRIDGE}`, `link set ${HOST_SIDE} up`, ''].join('\n') });
    await execOk(['ip', '-b', '-'], { input: [`addr add ${hostAddress}/24 dev ${link}`, `link set ${link} up`, ''].join('\n') });
    const routes = JSON.parse((await execOk(['ip', '-j', 'route', 'show', subnet])).trim() || '[]') as Array<{ dev?: string }>;
    if (routes.length !== 1 || routes[0]!.dev !== link) {
      throw new Error(`${subnet} is routed elsewhere too (${JSON.stringify(routes)}); another network took it meanwhile`);
    }
  } catch (err) {
    await close();
    throw new Error(`cannot create sandbox host network ${name}: ${(err as Error).message}`);
  }
  return { network, subnet, gateway, hostAddress, namespace, close };
}
