import type { StackConfig } from '../config';
import { PRIVATE_DESTINATIONS } from '../runtime/network/private-ranges';

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
