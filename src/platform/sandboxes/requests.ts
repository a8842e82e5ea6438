/** The bodies and query of the sandbox endpoints, as E2B clients send them, validated at the edge. */
import { z } from 'zod';
import { allowInternetAccessSchema, networkSchema, networkUpdateSchema } from './network-requests';
import { unsupported } from './unsupported-field';
import { volumeMountsSchema } from './volume-mounts';

/** Seconds: E2B's default for a new sandbox and for connect. */
export const DEFAULT_TIMEOUT_SECONDS = 300;
/** The longest a sandbox may be asked to live at once (24 h, E2B's largest plan); setTimeout can extend it. */
export const MAX_TIMEOUT_SECONDS = 86_400;

const timeout = z
  .number({ message: 'expected a whole number of seconds' })
  .int({ message: 'expected a whole number of seconds' })
  .min(1, { message: `expected 1 to ${MAX_TIMEOUT_SECONDS} seconds` })
  .max(MAX_TIMEOUT_SECONDS, { message: `expected 1 to ${MAX_TIMEOUT_SECONDS} seconds` });

const stringMap = (what: string) =>
  z.record(z.string(), z.string({ message: `expected ${what} values to be strings` }), {
    message: `expected an object of ${what}, string to string`,
  });

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const newSandboxSchema = z.object({
  templateID: z
    .string({ message: 'expected a template ID or alias (a string), e.g. "base"' })
    .min(1, { message: 'expected a template ID or alias, e.g. "base"' }),
  timeout: timeout.default(DEFAULT_TIMEOUT_SECONDS),
  metadata: stringMap('metadata').default({}),
  envVars: stringMap('environment variables')
    .refine((m) => Object.keys(m).every((k) => ENV_NAME.test(k)), {
      message: 'expected variable names of letters, digits and "_", not starting with a digit',
    })
    .default({}),
  autoPause: z.boolean({ message: 'expected true or false' }).default(false),
  autoPauseMemory: z.boolean({ message: 'expected true or false' }).optional(),
  autoResume: z
    .object({ enabled: z.boolean({ message: 'expected true or false' }) }, { message: 'expected {"enabled": true|false}' })
    .optional(),
  allow_internet_access: allowInternetAccessSchema,
  secure: z.boolean().optional(),
  network: networkSchema.optional(),
  /** Tool servers: validated against the MCP catalog by checkSandboxMcp, which never echoes secret values. */
  mcp: z.unknown().optional(),
  iam: unsupported('IAM tokens'),
  volumeMounts: volumeMountsSchema.optional(),
});
export type NewSandbox = z.output<typeof newSandboxSchema>;

const memory = z.boolean({ message: 'expected true (keep memory) or false (only the filesystem)' }).optional();

export const connectSchema = z.object({
  timeout: timeout.default(DEFAULT_TIMEOUT_SECONDS),
  /** false: a paused sandbox is rebooted from its files (the SDK's `onResume: 'reboot'`). */
  memory,
});

/** The legacy resume call (`POST /sandboxes/{id}/resume`), which the gateway uses for auto-resume. */
export const resumeSchema = z.object({
  timeout: timeout.default(DEFAULT_TIMEOUT_SECONDS),
  autoPause: z.boolean({ message: 'expected true or false' }).optional(),
  memory,
});

export const setTimeoutSchema = z.object({ timeout });

/** `memory: false` pauses to disk: processes end, memory is freed, the filesystem stays. */
export const pauseSchema = z.object({ memory });

export const LIST_STATES = ['running', 'paused'] as const;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 100;

/** A metadata filter in a query: itself URL-encoded, `k=v&k2=v2`. */
const metadataQuery = z
  .string()
  .transform((s) => Object.fromEntries(new URLSearchParams(s)))
  .optional();

/** A list's page size in a query string (sandboxes, snapshots): 1 to MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT when absent. */
export const listLimitSchema = z
  .string()
  .regex(/^[0-9]{1,4}$/, { message: `expected a whole number from 1 to ${MAX_LIST_LIMIT}` })
  .transform(Number)
  .pipe(
    z
      .number()
      .min(1, { message: `expected a whole number from 1 to ${MAX_LIST_LIMIT}` })
      .max(MAX_LIST_LIMIT, { message: `expected a whole number from 1 to ${MAX_LIST_LIMIT}` }),
  )
  .default(DEFAULT_LIST_LIMIT);

/** `GET /v2/sandboxes` query: arrays come comma-separated; metadata is itself a URL-encoded `k=v&k2=v2`. */
export const listQuerySchema = z.object({
  state: z
    .string()
    .transform((s) => s.split(',').filter((x) => x !== ''))
    .pipe(z.array(z.enum(LIST_STATES, { message: `expected states among ${LIST_STATES.join(', ')} (comma-separated)` })))
    .optional(),
  metadata: metadataQuery,
  template: z.string().min(1).optional(),
  limit: listLimitSchema,
  nextToken: z.string().min(1).optional(),
  startedAfter: z.iso.datetime({ offset: true, message: 'expected an RFC 3339 time, e.g. 2026-01-01T00:00:00Z' }).optional(),
  order: z.enum(['asc', 'desc'], { message: 'expected asc or desc' }).default('desc'),
});
export type ListQuery = z.output<typeof listQuerySchema>;

/** `GET /sandboxes` query (the 1.x list): only a metadata filter; it lists running sandboxes, all at once. */
export const legacyListQuerySchema = z.object({ metadata: metadataQuery });

/** The query as an object of its first values, for the schema (a repeated key is refused there as a non-string). */
export function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}

export { networkUpdateSchema };
export type NetworkUpdate = z.output<typeof networkUpdateSchema>;
