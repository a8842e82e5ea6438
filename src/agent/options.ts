/**
 * The agent's settings, validated once at the edge (CLI flags or an in-process caller). Checked by hand, not with a
 * schema library: the agent starts in every sandbox, and such a library was most of its bundle and of its start-up.
 */
import * as os from 'node:os';
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

/** The integer settings: the least (and most) each accepts, and its default. */
const INTEGERS = {
  port: { min: 0, max: 65535, default: DEFAULT_AGENT_PORT },
  maxEntries: { min: 1, default: DEFAULT_MAX_ENTRIES },
  maxBodyBytes: { min: 1024, default: DEFAULT_MAX_BODY_BYTES },
  maxResponseBytes: { min: 64 * 1024, default: DEFAULT_MAX_RESPONSE_BYTES },
  /** A client must send its whole request head within this time (then 408; checked every quarter of it: server.ts). */
  headTimeoutMs: { min: 100, default: 20_000 },
  /** An answer the client takes nothing of for this long is dropped with its connection. */
  stallTimeoutMs: { min: 100, default: 30_000 },
  /** A ListDir walk still running after this long ends with resource_exhausted (--max-entries entries take seconds). */
  listTimeoutMs: { min: 100, default: DEFAULT_LIST_TIMEOUT_MS },
} satisfies Record<string, { min: number; max?: number; default: number }>;

type IntegerName = keyof typeof INTEGERS;

export type AgentOptionsInput = { [K in IntegerName]?: number } & {
  /** Address to listen on (default 0.0.0.0). */
  host?: string;
  /** The sandbox's access token; when set, X-Access-Token must equal it. */
  accessToken?: string;
  /** The user for requests without an Authorization header; defaults to the agent's own process user. */
  defaultUser?: string;
  /** Brand token: metadata lives in xattrs under user.<brand lower>. (default Svc). */
  brand?: string;
};

export type AgentOptions = { [K in IntegerName]: number } & {
  host: string;
  accessToken?: string;
  defaultUser: string;
  brand: string;
};

const KNOWN = new Set<string>([...Object.keys(INTEGERS), 'host', 'accessToken', 'defaultUser', 'brand']);

function integerProblem(value: unknown, rule: { min: number; max?: number }): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'expected an integer';
  if (value < rule.min) return `expected an integer >= ${rule.min}`;
  if (rule.max !== undefined && value > rule.max) return `expected an integer <= ${rule.max}`;
  return undefined;
}

function brandProblem(brand: string): string | undefined {
  try {
    brandNames(brand);
    return undefined;
  } catch {
    return 'expected a capitalised word of letters and digits, such as Svc';
  }
}

/** The options with their defaults; every problem at once in one error ("invalid agent options: field: problem; ..."). */
export function parseAgentOptions(input: AgentOptionsInput): AgentOptions {
  const problems: string[] = [];
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!KNOWN.has(key)) problems.push(`${key}: not an agent option`);
  const integers = {} as Record<IntegerName, number>;
  for (const [name, rule] of Object.entries(INTEGERS) as Array<[IntegerName, (typeof INTEGERS)[IntegerName]]>) {
    const value = given[name] === undefined ? rule.default : given[name];
    const problem = integerProblem(value, rule);
    if (problem) problems.push(`${name}: ${problem}`);
    integers[name] = value as number;
  }
  const text = (name: string, fallback?: string): string | undefined => {
    const value = given[name] === undefined ? fallback : given[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') {
      problems.push(`${name}: expected a non-empty string`);
      return undefined;
    }
    return value;
  };
  const host = text('host', '0.0.0.0')!;
  const accessToken = given.accessToken as string | undefined;
  if (accessToken !== undefined && (typeof accessToken !== 'string' || !ACCESS_TOKEN_PATTERN.test(accessToken)))
    problems.push(`accessToken: expected ${ACCESS_TOKEN_RULE}`);
  const defaultUser = text('defaultUser');
  const brand = text('brand', DEFAULT_BRAND);
  const badBrand = brand === undefined ? undefined : brandProblem(brand);
  if (badBrand) problems.push(`brand: ${badBrand}`);
  if (problems.length > 0) throw new Error(`invalid agent options: ${problems.join('; ')}`);
  return {
    ...integers,
    host,
    ...(accessToken !== undefined ? { accessToken } : {}),
    defaultUser: defaultUser ?? os.userInfo().username,
    brand: brand!,
  };
}
