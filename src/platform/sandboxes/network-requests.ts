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
import type { TransformPolicy } from '../../runtime/network/egress-relay/transform';
import { canonicalRuleKey, FRAMING_HEADERS, SECRET_PLACEHOLDER, type TransformRules } from '../../runtime/network/transform-rules';
import { HOST_MASK_RULE, isHostMask, MAX_HTTPS_PORTS } from '../../contract/sandbox-ports';

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

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** The most bytes of header names and values one rule key's rules may set. */
const MAX_RULE_HEADER_BYTES = 8 * 1024;
const RULE_KEY = `${DOMAIN_RULE}, the host of HTTPS requests to transform`;
const HEADER_VALUE = `a header value: text without control characters, where $\{e2b.secrets.NAME} stands for the value of the team's secret NAME`;

/** One header of a transform: a token name that does not frame the request, a value whose placeholders name secrets. */
const headerValue = z.string({ message: `expected ${HEADER_VALUE}` }).superRefine((v, ctx) => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(v)) ctx.addIssue({ code: 'custom', message: `expected ${HEADER_VALUE}` });
  if (v.includes('${e2b.identity.'))
    ctx.addIssue({ code: 'custom', message: 'iam token placeholders are not supported by this platform; leave them out' });
  for (const m of v.matchAll(SECRET_PLACEHOLDER))
    if (!SECRET_NAME.test(m[1] as string))
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(m[0])} does not name a secret (names are 1 to 128 letters, digits, ".", "_" or "-")`,
      });
  const rest = v.replace(SECRET_PLACEHOLDER, '');
  if (rest.includes('${e2b.')) ctx.addIssue({ code: 'custom', message: `expected ${HEADER_VALUE}; no other \${e2b.…} placeholder exists` });
});

const transformSchema = z.strictObject(
  {
    headers: z
      .record(z.string(), headerValue, { message: 'expected an object of header names and values' })
      .superRefine((h, ctx) => {
        for (const name of Object.keys(h)) {
          if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'expected a header name (an HTTP token)' });
          else if ((FRAMING_HEADERS as readonly string[]).includes(name.toLowerCase()))
            ctx.addIssue({ code: 'custom', path: [name], message: `${name} frames the request and is not set by a transform` });
        }
      })
      .optional(),
  },
  { error: keysError(['headers'], `{"headers": {"Authorization": "Bearer $\{e2b.secrets.api-key}"}}`) },
);

/** `rules`: host -> rules, keys canonical (lower-case); an empty object is no rules. */
const rulesSchema = z
  .record(
    z.string(),
    z.array(
      z.strictObject({ transform: transformSchema.optional() }, { error: keysError(['transform'], '{"transform": {"headers": {...}}}') }),
      { message: 'expected a list of rules such as [{"transform": {"headers": {...}}}]' },
    ),
    {
      message: 'expected an object of hosts and their rules, such as {"api.example.com": [{"transform": {"headers": {...}}}]}',
    },
  )
  .superRefine((rules, ctx) => {
    const seen = new Map<string, string>();
    for (const [key, set] of Object.entries(rules)) {
      const canonical = canonicalRuleKey(key);
      if (canonical === undefined) {
        ctx.addIssue({ code: 'custom', path: [key], message: `expected ${RULE_KEY}` });
        continue;
      }
      const before = seen.get(canonical);
      if (before !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `the same host as ${JSON.stringify(before)}` });
      seen.set(canonical, key);
      const bytes = set
        .flatMap((r) => Object.entries(r.transform?.headers ?? {}))
        .reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
      if (bytes > MAX_RULE_HEADER_BYTES)
        ctx.addIssue({ code: 'custom', path: [key], message: `${bytes} bytes of headers; at most ${MAX_RULE_HEADER_BYTES}` });
    }
  })
  .transform((rules): TransformRules => {
    const out: TransformRules = {};
    for (const [key, set] of Object.entries(rules))
      out[canonicalRuleKey(key) as string] = set.map((r) =>
        r.transform?.headers ? { transform: { headers: { ...r.transform.headers } } } : {},
      );
    return out;
  })
  .nullable()
  .transform((v) => v ?? undefined)
  .optional();

const egressFields = {
  allowOut: allowList.optional(),
  denyOut: denyList.optional(),
  egressProxy: egressProxySchema.optional(),
  rules: rulesSchema,
};

const PORT = 'a port number from 1 to 65535';

/** `httpsPorts`: the sandbox's ports the gateway reaches over TLS; each once, the agent's refused by the service. */
const httpsPortsSchema = z
  .array(
    z
      .number({ message: `expected ${PORT}` })
      .int({ message: `expected ${PORT}` })
      .min(1, { message: `expected ${PORT}` })
      .max(65535, { message: `expected ${PORT}` }),
    {
      message: `expected a list of ports such as [3000, 8443]`,
    },
  )
  .max(MAX_HTTPS_PORTS, { message: `at most ${MAX_HTTPS_PORTS} ports` })
  .transform((ports) => [...new Set(ports)].sort((a, b) => a - b))
  .optional();

/** `maskRequestHost`: the Host header the sandbox's services see. */
const maskRequestHostSchema = z
  .string({ message: `expected ${HOST_MASK_RULE}` })
  .refine(isHostMask, { message: `expected ${HOST_MASK_RULE}` })
  .optional();

export const networkSchema = z.strictObject(
  {
    ...egressFields,
    /** false: the sandbox's ports other than the agent's need its traffic access token (docs/network.md). */
    allowPublicTraffic: z.boolean({ message: 'expected true or false' }).optional(),
    /** The Host header the sandbox's services see, with the port put in (contract/sandbox-ports.ts). */
    maskRequestHost: maskRequestHostSchema,
    /** Its ports that serve HTTPS: the gateway reaches them over TLS without checking the certificate. */
    httpsPorts: httpsPortsSchema,
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
  /** Per-domain transforms of HTTPS requests (with secret placeholders, never values): the egress relay applies them. */
  rules?: TransformRules;
}

/**
 * The policy the network enforces, from the lists, the internet switch, the proxy and (for a sandbox of the stack's
 * proxy template) the stack's proxy; undefined when nothing is restricted.
 */
export function egressPolicyOf(
  egress: EgressRequest | undefined,
  onlyTo?: ProxyTarget[],
  transforms?: TransformPolicy,
): EgressPolicy | undefined {
  if (onlyTo?.length) return { allowOut: [], denyOut: [], onlyTo };
  const entries = egress?.allowOut ?? [];
  const allowOut = entries.filter((e) => canonicalCidr(e) !== undefined);
  const allowDomains = entries.filter((e) => canonicalCidr(e) === undefined);
  const denyOut = [...new Set([...(egress?.denyOut ?? []), ...(egress?.allowInternetAccess === false ? ['0.0.0.0/0'] : [])])];
  const proxy = egress?.egressProxy ? egressProxyOf(egress.egressProxy) : undefined;
  if (allowOut.length === 0 && allowDomains.length === 0 && denyOut.length === 0 && !proxy && !transforms) return undefined;
  return {
    allowOut,
    denyOut,
    ...(allowDomains.length > 0 ? { allowDomains } : {}),
    ...(proxy ? { proxy } : {}),
    ...(transforms ? { transforms } : {}),
  };
}
