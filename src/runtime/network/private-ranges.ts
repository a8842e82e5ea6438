/** The address ranges no sandbox and no proxy ever reaches: one list for the proxy's ACL and the sandbox guard. */

/**
 * Destinations the proxy and sandboxes never connect to, so neither can be used as a door into private space:
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

/** IPv4 destinations a sandbox never reaches: private space, loopback, link-local (the metadata service), ... */
export function sandboxBlockedDestinations(hostNetworks: readonly string[]): string[] {
  const ipv4 = PRIVATE_DESTINATIONS.filter((c) => !c.includes(':'));
  return [...new Set([...ipv4, ...hostNetworks])];
}
