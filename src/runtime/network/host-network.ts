/**
 * A standalone sandbox network for tests and for a platform run without the lab: a "sandbox host" namespace
 * `<name>.host` with the bridge `sb` on a free /24 of 198.19.0.0/16, and ONE veth link from the root namespace
 * onto that bridge (root side .254), so processes in the root namespace (platform, gateway, tests) reach the
 * agents directly. Nothing else in the root namespace changes: no sysctl, no firewall rule, no forwarding.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../../util/exec';
import { checkInstanceName } from '../instance';
import type { SandboxNetwork } from '../types';
import { BridgeNetwork, macFor, NETNS_DIR } from './bridge-network';

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

export async function createSandboxHostNetwork(name: string): Promise<SandboxHostNetwork> {
  checkInstanceName(name);
  const namespace = hostNamespaceName(name);
  const link = rootLinkName(name);
  if (fs.existsSync(`${NETNS_DIR}/${namespace}`))
    throw new Error(`sandbox host network ${name} exists already (${NETNS_DIR}/${namespace}); close it or clean up leftovers first`);
  const used = await usedThirdOctets();
  const free = Array.from({ length: 254 }, (_, i) => i + 1).filter((x) => !used.has(x));
  if (free.length === 0) throw new Error(`no free /24 left in ${STANDALONE_RANGE}`);
  const x = free[Math.floor(Math.random() * free.length)]!;
  const handle = hostNetworkHandle(name, x);
  const { subnet, gateway, hostAddress, close } = handle;
  try {
    await execOk(['ip', 'netns', 'add', namespace]);
    // A fixed bridge MAC: Linux otherwise gives a bridge the lowest MAC of its ports, so a sandbox's port coming or
    // going could change it under the other sandboxes, whose ARP entries for the gateway would then point nowhere.
    await execOk(['ip', '-n', namespace, '-b', '-'], {
      input: [
        'link set lo up',
        `link add ${BRIDGE} address ${macFor(gateway)} type bridge`,
        `addr add ${gateway}/24 dev ${BRIDGE}`,
        `link set ${BRIDGE} up`,
        '',
      ].join('\n'),
    });
    await execOk(['ip', 'link', 'add', link, 'type', 'veth', 'peer', 'name', HOST_SIDE, 'netns', namespace]);
    await execOk(['ip', '-n', namespace, '-b', '-'], {
      input: [`link set ${HOST_SIDE} master ${BRIDGE}`, `link set ${HOST_SIDE} up`, ''].join('\n'),
    });
    await execOk(['ip', '-b', '-'], { input: [`addr add ${hostAddress}/24 dev ${link}`, `link set ${link} up`, ''].join('\n') });
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

/** The handle of the standalone network `name` on 198.19.<x>.0/24 (made or found). */
function hostNetworkHandle(name: string, x: number): SandboxHostNetwork {
  const namespace = hostNamespaceName(name);
  const subnet = `198.19.${x}.0/24`;
  const gateway = `198.19.${x}.1`;
  const hostAddress = `198.19.${x}.254`;
  const network = new BridgeNetwork({
    bridgeNamespace: namespace,
    bridge: BRIDGE,
    subnet,
    gateway,
    netnsPrefix: `${name}-`,
    reserved: [hostAddress],
  });
  const close = async (): Promise<void> => {
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) {
      for (const id of (await network.list()).keys()) await network.detach(id);
    }
    await exec(['ip', 'link', 'del', rootLinkName(name)]);
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) await exec(['ip', 'netns', 'del', namespace]);
  };
  return { network, subnet, gateway, hostAddress, namespace, close };
}

/**
 * The standalone network `name` as a previous run left it (a restarted platform's sandboxes still live on it), read
 * back from its bridge's address; undefined when there is none.
 */
export async function reopenSandboxHostNetwork(name: string): Promise<SandboxHostNetwork | undefined> {
  checkInstanceName(name);
  const namespace = hostNamespaceName(name);
  if (!fs.existsSync(`${NETNS_DIR}/${namespace}`)) return undefined;
  const out = await execOk(['ip', '-n', namespace, '-j', 'addr', 'show', 'dev', BRIDGE]);
  const info = (JSON.parse(out.trim() || '[]') as Array<{ addr_info?: Array<{ family: string; local: string; prefixlen: number }> }>)[0];
  const v4 = info?.addr_info?.find((a) => a.family === 'inet');
  const m = v4 ? /^198\.19\.(\d+)\.1$/.exec(v4.local) : null;
  if (!v4 || !m || v4.prefixlen !== 24) {
    throw new Error(
      `sandbox host network ${name}: the bridge ${BRIDGE} in ${namespace} has no 198.19.x.1/24 address; remove it (ip netns del ${namespace}) and start again`,
    );
  }
  return hostNetworkHandle(name, Number(m[1]));
}

/** The standalone network `name`: the existing one when a previous run left it, else a new one. */
export async function openSandboxHostNetwork(name: string): Promise<SandboxHostNetwork> {
  return (await reopenSandboxHostNetwork(name)) ?? createSandboxHostNetwork(name);
}
