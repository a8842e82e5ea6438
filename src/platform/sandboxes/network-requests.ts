/**
 * The `network` object of a create body and the body of `PUT /sandboxes/{id}/network`, as the E2B SDK's
 * buildNetworkBody and buildNetworkUpdateBody send them. Unknown keys are refused with their name, so a misspelt rule
 * never passes as "no rule"; every entry of a rule list is checked, and the error names it.
 */
import { BlockList, isIPv4 } from 'node:net';
import { z } from 'zod';
import { canonicalDomainRule, DOMAIN_RULE } from '../../runtime/network/domain-names';
import { canonicalCidr, type EgressPolicy, type EgressProxy, type ProxyTarget } from '../../runtime/network/egress-policy';
import { PRIVATE_DESTINATIONS } from '../../runtime/network/private-ranges';
import { unsupported } from './unsupported-field';

const DESTINATION = 'an IPv4 address or CIDR such as 8.8.8.8 or 8.8.8.0/24';

const looksLikeDomain = (v: string) => canonicalDomainRule(v) !== undefined;

/** `allowOut`: addresses, CIDRs and domain names, canonical (bare addresses become /32, names lower-case). */
const allowList = z
  .array(z.string({ message: `expected ${DESTINATION} or ${DOMAIN_RULE}` }), {
    message: `expected a list of ${DESTINATION} or ${DOMAIN_RULE}`,
  })
  .superRefine((list, ctx) => {
    list.forEach((entry, i) => {
      if (canonicalCidr(entry) !== undefined || looksLikeDomain(entry)) return;
      ctx.addIssue({ code: 'custom', path: [i], message: `expected ${DESTINATION} or ${DOMAIN_RULE}`, input: entry });
    });
  })
  .transform((list) => [...new Set(list.map((e) => canonicalCidr(e) ?? (canonicalDomainRule(e) as string)))]);

/** `denyOut`: addresses and CIDRs only (E2B's rule), canonical. */
const denyList = z
  .array(z.string({ message: `expected ${DESTINATION}` }), { message: `expected a list of ${DESTINATION}` })
  .superRefine((list, ctx) => {
    list.forEach((entry, i) => {
      if (canonicalCidr(entry) !== undefined) return;
      const message = looksLikeDomain(entry)
        ? 'domain names are not supported for deny rules; deny addresses or CIDRs'
        : `expected ${DESTINATION}`;
      ctx.addIssue({ code: 'custom', path: [i], message, input: entry });
    });
  })
  .transform((list) => [...new Set(list.map((e) => canonicalCidr(e) as string))]);

const PROXY_ADDRESS = 'host:port of a SOCKS5 proxy, such as proxy.example.com:1080 or 203.0.113.5:1080 (a public address)';

function inPrivateSpace(address: string): boolean {
  const list = new BlockList();
  for (const c of PRIVATE_DESTINATIONS.filter((d) => !d.includes(':'))) {
    const [a, p] = c.split('/');
    list.addSubnet(a!, Number(p), 'ipv4');
  }
  return list.check(address, 'ipv4');
}

const credential = (what: string) =>
  z
    .string({ message: `expected the proxy's ${what} as a string` })
    .refine((v) => Buffer.byteLength(v, 'utf8') <= 255 && v.length > 0, { message: `expected 1 to 255 bytes` })
    .optional();

/** `egressProxy`: {address, username?, password?} (RFC 1929 credentials), or null for none. */
const egressProxySchema = z
  .strictObject(
    {
      address: z.string({ message: `expected ${PROXY_ADDRESS}` }).superRefine((v, ctx) => {
        const m = /^(.+):(\d{1,5})$/.exec(v.trim());
        const host = m?.[1] ?? '';
        const port = Number(m?.[2]);
        const hostOk = isIPv4(host) ? !inPrivateSpace(host) : canonicalDomainRule(host) !== undefined && !host.startsWith('*.');
        if (!m || port < 1 || port > 65535 || !hostOk) {
          ctx.addIssue({
            code: 'custom',
            message:
              isIPv4(host) && inPrivateSpace(host)
                ? `${host} is private space, which sandboxes never reach; expected ${PROXY_ADDRESS}`
                : `expected ${PROXY_ADDRESS}`,
            input: v,
          });
        }
      }),
      username: credential('user name'),
      password: credential('password'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown key ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')}: the accepted keys are address, username, password`
          : issue.code === 'invalid_type'
            ? 'expected an object such as {"address": "proxy.example.com:1080"}'
            : undefined,
    },
  )
  .superRefine((p, ctx) => {
    if (p.password !== undefined && p.username === undefined)
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'a password needs a username' });
  })
  .nullable()
  .optional()
  .transform((v) => v ?? undefined);

const allowInternetAccess = z.boolean({ message: 'expected true or false' });

const keysError = (keys: readonly string[], example: string) => (issue: { code: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys'
    ? `unknown key ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')}: the accepted keys are ${keys.join(', ')}`
    : issue.code === 'invalid_type'
      ? `expected an object such as ${example}`
      : undefined;

const egressFields = {
  allowOut: allowList.optional(),
  denyOut: denyList.optional(),
  egressProxy: egressProxySchema.optional(),
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
      '{"denyOut": ["0.0.0.0/0"], "allowOut": ["1.1.1.1", "example.com"]}',
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

/** An egress proxy as stored: the address parsed once. */
export function egressProxyOf(p: { address: string; username?: string; password?: string }): EgressProxy {
  const m = /^(.+):(\d{1,5})$/.exec(p.address.trim()) as RegExpExecArray;
  return {
    host: m[1]!.toLowerCase(),
    port: Number(m[2]),
    ...(p.username !== undefined ? { username: p.username } : {}),
    ...(p.password !== undefined ? { password: p.password } : {}),
  };
}

/** A sandbox's egress as the platform keeps it (the record's `egress`). */
export interface EgressRequest {
  allowOut?: string[];
  denyOut?: string[];
  allowInternetAccess?: boolean;
  egressProxy?: { address: string; username?: string; password?: string };
}

/**
 * The policy the network enforces, from the lists, the internet switch, the proxy and (for a sandbox of the stack's
 * proxy template) the stack's proxy; undefined when nothing is restricted.
 */
export function egressPolicyOf(egress: EgressRequest | undefined, onlyTo?: ProxyTarget[]): EgressPolicy | undefined {
  if (onlyTo?.length) return { allowOut: [], denyOut: [], onlyTo };
  const entries = egress?.allowOut ?? [];
  const allowOut = entries.filter((e) => canonicalCidr(e) !== undefined);
  const allowDomains = entries.filter((e) => canonicalCidr(e) === undefined);
  const denyOut = [...new Set([...(egress?.denyOut ?? []), ...(egress?.allowInternetAccess === false ? ['0.0.0.0/0'] : [])])];
  const proxy = egress?.egressProxy ? egressProxyOf(egress.egressProxy) : undefined;
  if (allowOut.length === 0 && allowDomains.length === 0 && denyOut.length === 0 && !proxy) return undefined;
  return { allowOut, denyOut, ...(allowDomains.length > 0 ? { allowDomains } : {}), ...(proxy ? { proxy } : {}) };
}
