/**
 * The platform's own sandbox network when no lab provides one: the runtime's standalone sandbox host network,
 * opened again when it exists already (a restarted platform's sandboxes still live on it).
 */
import * as fs from 'node:fs';
import { exec, execOk } from '../runtime/exec';
import { BridgeNetwork, NETNS_DIR } from '../runtime/network/bridge-network';
import { createSandboxHostNetwork, hostNamespaceName, rootLinkName, type SandboxHostNetwork } from '../runtime/network/host-network';

/** The bridge's name inside the host namespace (as the runtime's standalone network makes it). */
const BRIDGE = 'sb';

/** Re-reads an existing standalone network's subnet from its bridge; undefined when there is none. */
async function reopen(name: string): Promise<SandboxHostNetwork | undefined> {
  const namespace = hostNamespaceName(name);
  if (!fs.existsSync(`${NETNS_DIR}/${namespace}`)) return undefined;
  const out = await execOk(['ip', '-n', namespace, '-j', 'addr', 'show', 'dev', BRIDGE]);
  const info = (JSON.parse(out.trim() || '[]') as Array<{ addr_info?: Array<{ family: string; local: string; prefixlen: number }> }>)[0];
  const v4 = info?.addr_info?.find((a) => a.family === 'inet');
  if (v4?.prefixlen !== 24) throw new Error(`sandbox host network ${name}: its bridge ${BRIDGE} in ${namespace} has no /24 address; remove the namespace (ip netns del ${namespace}) and start again`);
  const prefix = v4.local.split('.').slice(0, 3).join('.');
  const subnet = `${prefix}.0/24`;
  const hostAddress = `${prefix}.254`;
  const link = rootLinkName(name);
  const network = new BridgeNetwork({ bridgeNamespace: namespace, bridge: BRIDGE, subnet, gateway: v4.local, netnsPrefix: `${name}-`, reserved: [hostAddress] });
  const close = async () => {
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) {
      for (const id of (await network.list()).keys()) await network.detach(id);
    }
    await exec(['ip', 'link', 'del', link]);
    if (fs.existsSync(`${NETNS_DIR}/${namespace}`)) await exec(['ip', 'netns', 'del', namespace]);
  };
  return { network, subnet, gateway: v4.local, hostAddress, namespace, close };
}

export async function openStandaloneNetwork(name: string): Promise<SandboxHostNetwork> {
  return (await reopen(name)) ?? createSandboxHostNetwork(name);
}
