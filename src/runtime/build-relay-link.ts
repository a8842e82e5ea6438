/**
 * Where a build step's egress relay listens. With crun and runc it listens on the loopback of the step's own network
 * namespace (the step's loopback is the host kernel's there). Under runsc the step's loopback is gVisor's own, which
 * no host process can listen on: the relay then sits in a second namespace made for this step alone, joined to the
 * step's by one veth pair (its `eth0`), and the step's proxy variables name the relay's end of that link.
 *
 * What the step can reach is the same either way: the relay, which speaks only to the platform's egress socket (a
 * host path). The relay's namespace has nothing but that link and its own loopback: no route, no other interface,
 * no listener but the relay; the step's has only the link's /30, no default route. The addresses are TEST-NET-1
 * (RFC 5737), never routed anywhere, and fixed: each step's pair of namespaces sees no other.
 */
import { execOk } from '../util/exec';
import { inNetns } from './network/in-netns';

export const RELAY_LINK = { relay: '192.0.2.1', step: '192.0.2.2', prefix: 30 } as const;

/** The relay's own namespace beside a step's: `<step netns>-relay` (cleanup.ts finds it by the step's prefix). */
export function relayNetnsName(stepNetns: string): string {
  return `${stepNetns}-relay`;
}

/** Makes the relay's namespace and the link; returns the address the relay listens on. */
export async function createRelayLink(stepNetns: string): Promise<string> {
  const relayNs = relayNetnsName(stepNetns);
  await execOk(['ip', 'netns', 'add', relayNs]);
  await execOk(['ip', 'link', 'add', 'relay0', 'netns', relayNs, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', stepNetns]);
  for (const [ns, dev, address] of [
    [relayNs, 'relay0', RELAY_LINK.relay],
    [stepNetns, 'eth0', RELAY_LINK.step],
  ] as const) {
    await execOk(inNetns(ns, ['ip', 'addr', 'add', `${address}/${RELAY_LINK.prefix}`, 'dev', dev]));
    await execOk(inNetns(ns, ['ip', 'link', 'set', dev, 'up']));
  }
  await execOk(inNetns(relayNs, ['ip', 'link', 'set', 'lo', 'up']));
  return RELAY_LINK.relay;
}
