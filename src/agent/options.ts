/** The agent's settings, validated once at the edge (CLI flags or an in-process caller). */
import * as os from 'node:os';
import { z } from 'zod';
import { brandNames, DEFAULT_BRAND } from '../contract/brand';
import { DEFAULT_AGENT_PORT } from '../contract/agent-port';
import { ACCESS_TOKEN_PATTERN, ACCESS_TOKEN_RULE } from '../contract/access-token';

export { DEFAULT_AGENT_PORT };
/** ~150 MB of response at ~300 bytes an entry: fits a 1 GiB sandbox with room to spare. */
export const DEFAULT_MAX_ENTRIES = 500_000;
/** A walk of DEFAULT_MAX_ENTRIES entries takes a few seconds (docs/agent.md); one still going after this is not a listing. */
export const DEFAULT_LIST_TIMEOUT_MS = 10_000;
/** A request is a path and a depth; 64 KiB holds the longest Linux path escaped several times over. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/**
 * Unsent ListDir answers of all calls together: 32 MiB holds a listing of ~100,000 entries, and keeps the agent's
 * peak memory near 128 MiB whatever its clients do (docs/agent.md, "Memory").
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export const agentOptionsSchema = z.strictObject({
  port: z.number().int().min(0).max(65535).default(DEFAULT_AGENT_PORT),
  host: z.string().min(1).default('0.0.0.0'),
  /** The sandbox's access token; when set, X-Access-Token must equal it. */
  accessToken: z.string().regex(ACCESS_TOKEN_PATTERN, `expected ${ACCESS_TOKEN_RULE}`).optional(),
  /** The user for requests without an Authorization header; defaults to the agent's own process user. */
  defaultUser: z.string().min(1).optional(),
  brand: z
    .string()
    .default(DEFAULT_BRAND)
    .refine((b) => {
      try {
        brandNames(b);
        return true;
      } catch {
        return false;
      }
    }, 'expected a capitalised word of letters and digits, such as Svc'),
  maxEntries: z.number().int().min(1).default(DEFAULT_MAX_ENTRIES),
  maxBodyBytes: z.number().int().min(1024).default(DEFAULT_MAX_BODY_BYTES),
  maxResponseBytes: z
    .number()
    .int()
    .min(64 * 1024)
    .default(DEFAULT_MAX_RESPONSE_BYTES),
  /** A client must send its whole request head within this time (then 408). */
  headTimeoutMs: z.number().int().min(100).default(20_000),
  /** An answer the client takes nothing of for this long is dropped with its connection. */
  stallTimeoutMs: z.number().int().min(100).default(30_000),
  /** A ListDir walk still running after this long ends with resource_exhausted (--max-entries entries take seconds). */
  listTimeoutMs: z.number().int().min(100).default(DEFAULT_LIST_TIMEOUT_MS),
});

export type AgentOptionsInput = z.input<typeof agentOptionsSchema>;
export type AgentOptions = z.output<typeof agentOptionsSchema> & { defaultUser: string };

export function parseAgentOptions(input: AgentOptionsInput): AgentOptions {
  const result = agentOptionsSchema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`);
    throw new Error(`invalid agent options: ${problems.join('; ')}`);
  }
  return { ...result.data, defaultUser: result.data.defaultUser ?? os.userInfo().username };
}
