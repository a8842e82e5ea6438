import { isIP } from 'node:net';
import { z } from 'zod';
import {
  ACCESS_TOKEN_PATTERN,
  ACCESS_TOKEN_RULE,
  DEFAULT_AGENT_PORT,
  HOST_MASK_RULE,
  hashAccessToken,
  isHostMask,
  MAX_HTTPS_PORTS,
  SANDBOX_ID_PATTERN,
} from '../contract';

export const SANDBOX_STATES = ['running', 'paused'] as const;
export type SandboxState = (typeof SANDBOX_STATES)[number];

/** What the gateway knows about one sandbox. */
export interface CatalogEntry {
  sandboxID: string;
  /** The sandbox's own address: every port the gateway opens for this sandbox is on this host. */
  host: string;
  /** Port of the agent, used when a request names no port. */
  agentPort: number;
  /** sha256 hex of the sandbox's access token (envdAccessToken); the plain token is never stored. */
  tokenHash: string;
  state: SandboxState;
  /** A paused sandbox with autoResume is resumed by the first request instead of answering 502. */
  autoResume: boolean;
  /** In a fleet: the sandbox host that holds it (its platform answers the API calls for it). */
  hostID?: string;
  /**
   * sha256 hex of the sandbox's traffic access token, when its ports other than the agent's are not public
   * (`network.allowPublicTraffic: false`): calls to them must then carry that token.
   */
  trafficTokenHash?: string;
  /** Its ports that serve HTTPS (`network.httpsPorts`): the gateway reaches them over TLS, any certificate accepted. */
  httpsPorts?: number[];
  /** The Host header its services see (`network.maskRequestHost`, see contract/sandbox-ports.ts); the agent's port sees the Host as sent. */
  maskRequestHost?: string;
}

/** A fleet host's ID: what `--host-id` accepts (an EC2 instance ID fits). */
export const HOST_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
export const HOST_ID_RULE = '1-63 letters, digits, "_", "." or "-", starting with a letter or digit, such as i-0abc123';

const hostname = z
  .string()
  .min(1)
  .max(253)
  .refine((h) => isIP(h) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(h), {
    message: 'expected an IP address or a host name such as 10.11.0.2',
  });

/**
 * An entry as written by people and programs: the plain `token` (hashed here, then forgotten) or its
 * `tokenHash`, never both; `agentPort`, `state` and `autoResume` have defaults.
 */
export const catalogEntryInputSchema = z
  .object({
    sandboxID: z.string().regex(SANDBOX_ID_PATTERN, {
      message: 'expected 1-63 letters, digits, "_" or "-", starting with a letter or digit',
    }),
    host: hostname,
    agentPort: z.number().int().min(1).max(65535).default(DEFAULT_AGENT_PORT),
    token: z
      .string()
      .regex(ACCESS_TOKEN_PATTERN, { message: `expected ${ACCESS_TOKEN_RULE}` })
      .optional(),
    tokenHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, { message: 'expected the sha256 of the token as 64 lowercase hex digits' })
      .optional(),
    state: z.enum(SANDBOX_STATES).default('running'),
    autoResume: z.boolean().default(false),
    hostID: z
      .string()
      .regex(HOST_ID_PATTERN, { message: `expected ${HOST_ID_RULE}` })
      .optional(),
    trafficTokenHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, { message: 'expected the sha256 of the traffic access token as 64 lowercase hex digits' })
      .optional(),
    httpsPorts: z
      .array(z.number().int().min(1).max(65535), { message: 'expected a list of port numbers (1 to 65535)' })
      .max(MAX_HTTPS_PORTS)
      .optional(),
    maskRequestHost: z
      .string()
      .refine(isHostMask, { message: `expected ${HOST_MASK_RULE}` })
      .optional(),
  })
  .strict()
  .refine((e) => (e.token === undefined) !== (e.tokenHash === undefined), {
    message: 'give exactly one of "token" (plain, hashed on load) or "tokenHash" (sha256 hex)',
  })
  .refine((e) => !e.httpsPorts?.includes(e.agentPort), {
    message: "httpsPorts may not list the agent's port: the gateway reaches the agent itself",
    path: ['httpsPorts'],
  });

export type CatalogEntryInput = z.input<typeof catalogEntryInputSchema>;

/** Validates an input entry and replaces a plain token by its hash; throws with every problem listed. */
export function toCatalogEntry(input: unknown, where = ''): CatalogEntry {
  const parsed = catalogEntryInputSchema.safeParse(input);
  if (!parsed.success) throw new Error(describeIssues(parsed.error.issues, where));
  const e = parsed.data;
  return {
    sandboxID: e.sandboxID,
    host: e.host,
    agentPort: e.agentPort,
    tokenHash: e.tokenHash ?? hashAccessToken(e.token as string),
    state: e.state,
    autoResume: e.autoResume,
    ...(e.hostID !== undefined ? { hostID: e.hostID } : {}),
    ...(e.trafficTokenHash !== undefined ? { trafficTokenHash: e.trafficTokenHash } : {}),
    ...(e.httpsPorts !== undefined && e.httpsPorts.length > 0 ? { httpsPorts: [...new Set(e.httpsPorts)] } : {}),
    ...(e.maskRequestHost !== undefined ? { maskRequestHost: e.maskRequestHost } : {}),
  };
}

export function describeIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): string {
  return issues
    .map((i) => {
      const where = [prefix, ...i.path.map(String)].filter((p) => p !== '').join('.');
      return `${where || 'entry'}: ${i.message}`;
    })
    .join('; ');
}
