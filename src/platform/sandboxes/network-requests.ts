/**
 * The `network` object of a create body, as the E2B SDK's buildNetworkBody sends it. Unknown keys are refused with
 * their name, so a misspelt rule never passes as "no rule".
 */
import { z } from 'zod';
import { unsupported } from './unsupported-field';

const NETWORK_KEYS = ['allowOut', 'denyOut', 'egressProxy', 'allowPublicTraffic', 'maskRequestHost', 'httpsPorts', 'rules'];

export const networkSchema = z.strictObject(
  {
    /** false: the sandbox's ports other than the agent's need its traffic access token (docs/network.md). */
    allowPublicTraffic: z.boolean({ message: 'expected true or false' }).optional(),
    allowOut: unsupported('egress allow rules'),
    denyOut: unsupported('egress deny rules'),
    egressProxy: unsupported('egress proxies'),
    rules: unsupported('per-domain transform rules'),
    maskRequestHost: unsupported('request host masks'),
    httpsPorts: unsupported('HTTPS sandbox ports'),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown key ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}: the accepted keys are ${NETWORK_KEYS.join(', ')}`
        : issue.code === 'invalid_type'
          ? 'expected an object such as {"allowPublicTraffic": false}'
          : undefined,
  },
);
export type NetworkRequest = z.output<typeof networkSchema>;
