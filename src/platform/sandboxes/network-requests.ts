/**
 * The `network` object of a create body and the body of `PUT /sandboxes/{id}/network`, as the E2B SDK's
 * buildNetworkBody and buildNetworkUpdateBody send them. Unknown keys are refused with their name, so a misspelt rule
 * never passes as "no rule"; every entry of a rule list is checked, and the error names it.
 */
import { z } from 'zod';
import { canonicalCidr, type EgressPolicy } from '../../runtime/network/egress-policy';
import { unsupported } from './unsupported-field';

const DESTINATION = 'an IPv4 address or CIDR such as 8.8.8.8 or 8.8.8.0/24';

const looksLikeDomain = (v: string) => /^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(v) && !/^[\d.]+$/.test(v);

/** One list of destinations, canonical (bare addresses become /32, host bits cleared). */
const destinations = (field: 'allowOut' | 'denyOut') =>
  z
    .array(z.string({ message: `expected ${DESTINATION}` }), { message: `expected a list of ${DESTINATION}` })
    .superRefine((list, ctx) => {
      list.forEach((entry, i) => {
        if (canonicalCidr(entry) !== undefined) return;
        const message =
          field === 'denyOut' && looksLikeDomain(entry)
            ? 'domain names are not supported for deny rules; deny addresses or CIDRs'
            : looksLikeDomain(entry)
              ? `domain names in allowOut are not supported by this platform yet; allow ${DESTINATION}`
              : `expected ${DESTINATION}`;
        ctx.addIssue({ code: 'custom', path: [i], message, input: entry });
      });
    })
    .transform((list) => [...new Set(list.map((e) => canonicalCidr(e) as string))]);

const allowInternetAccess = z.boolean({ message: 'expected true or false' });

const keysError = (keys: readonly string[], example: string) => (issue: { code: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys'
    ? `unknown key ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')}: the accepted keys are ${keys.join(', ')}`
    : issue.code === 'invalid_type'
      ? `expected an object such as ${example}`
      : undefined;

const egressFields = {
  allowOut: destinations('allowOut').optional(),
  denyOut: destinations('denyOut').optional(),
  egressProxy: unsupported('egress proxies'),
  rules: unsupported('per-domain transform rules'),
};

export const networkSchema = z.strictObject(
  {
    ...egressFields,
    /** false: the sandbox's ports other than the agent's need its traffic access token (docs/network.md). */
    allowPublicTraffic: z.boolean({ message: 'expected true or false' }).optional(),
    maskRequestHost: unsupported('request host masks'),
    httpsPorts: unsupported('HTTPS sandbox ports'),
  },
  {
    error: keysError(
      ['allowOut', 'denyOut', 'egressProxy', 'allowPublicTraffic', 'maskRequestHost', 'httpsPorts', 'rules'],
      '{"denyOut": ["0.0.0.0/0"], "allowOut": ["1.1.1.1"]}',
    ),
  },
);
export type NetworkRequest = z.output<typeof networkSchema>;

/** `allow_internet_access` of a create body: false is a deny of everything (E2B's own definition). */
export const allowInternetAccessSchema = allowInternetAccess.optional();

/** `PUT /sandboxes/{id}/network`: replaces the whole egress configuration; what is left out is cleared. */
export const networkUpdateSchema = z.strictObject(
  { ...egressFields, allow_internet_access: allowInternetAccess.optional() },
  { error: keysError(['allowOut', 'denyOut', 'egressProxy', 'rules', 'allow_internet_access'], '{"denyOut": ["0.0.0.0/0"]}') },
);

/** The policy the network enforces, from the lists and the internet switch; undefined when nothing is restricted. */
export function egressPolicyOf(
  lists: { allowOut?: string[]; denyOut?: string[] } | undefined,
  allowInternet: boolean | undefined,
): EgressPolicy | undefined {
  const allowOut = lists?.allowOut ?? [];
  const denyOut = [...new Set([...(lists?.denyOut ?? []), ...(allowInternet === false ? ['0.0.0.0/0'] : [])])];
  return allowOut.length === 0 && denyOut.length === 0 ? undefined : { allowOut, denyOut };
}
