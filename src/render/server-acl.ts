import type { StackConfig } from '../config';

/**
 * Destinations the proxy never connects to, so it cannot be used as a door into private space:
 * "this" network, RFC 1918, shared CGNAT space, loopback, link-local (the cloud metadata address), IETF protocol
 * assignments, benchmarking, multicast and reserved space, and their IPv6 counterparts.
 */
export const PRIVATE_DESTINATIONS = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
] as const;

/**
 * ss-server's ACL (`--acl`): accept every client; connect anywhere except the outbound block list. `hostNetworks` are the host's own
 * networks (the VPC, the lab's private subnet), blocked even when they are not in a private range.
 */
export function renderServerAcl(proxy: StackConfig['proxy'], hostNetworks: readonly string[] = []): string {
  const blocked = [...new Set([...PRIVATE_DESTINATIONS, ...hostNetworks, ...proxy.blockedCidrs])];
  return `# sandbox-kit: destinations the proxy refuses to reach
[accept_all]

[outbound_block_list]
${blocked.join('\n')}
`;
}
