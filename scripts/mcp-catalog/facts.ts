/**
 * The facts the public catalog gives about each server the E2B SDK names, beyond what the SDK's type says: how it
 * runs (an OCI image and its arguments, or a remote URL), which env vars its values travel in, which values are
 * secret. Facts only, no descriptions. `scripts/mcp-registry-facts.ts` extracts them once from a clone of the public
 * catalog's repository into templates/mcp/public-facts.json; the codegen reads that file.
 */

export interface ServerFacts {
  /** The server's name in the public catalog. */
  registry: string;
  /** Set when the server was removed from the catalog since: the commit its facts were read at. */
  readAt?: string;
  /** The OCI image that runs it (absent for a remote server). */
  image?: string;
  /** A server served over HTTP by its vendor. Header values name env vars as ${NAME}. */
  remote?: { url: string; transport: 'sse' | 'streamable-http'; headers?: Record<string, string> };
  /** The image's arguments; `{{server.param}}` stands for a configured value (`|into` spreads a list). */
  command?: string[];
  /** Env vars of the server: literal values or templates of configured values. */
  env?: Record<string, string>;
  /** Secret name (`server.key`) -> the env var it travels in. */
  secrets?: Record<string, string>;
  /** The names of its configuration parameters (non-secret values). */
  parameters?: string[];
}

export interface FactsFile {
  source: { repository: string; commit: string };
  servers: Record<string, ServerFacts>;
}

export function camelCase(text: string): string {
  const parts = text.split(/[-_.\s]+/).filter(Boolean);
  return parts.map((p, i) => (i === 0 ? p[0].toLowerCase() + p.slice(1) : p[0].toUpperCase() + p.slice(1))).join('');
}

/** How one SDK property reaches the server, by the facts: a secret's env var, or a parameter used in templates. */
export type Binding = { kind: 'secret'; secret: string; env: string } | { kind: 'parameter'; parameter: string };

/** A name as letters and digits only, lower case: the SDK spells some names oddly (`VECTRACLIENTID`, `SchemaPath`). */
function folded(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** `a_b_c` and, without its first word, `b_c`: the SDK drops a server-name prefix (`atlan_api_key` is `apiKey`). */
function spellings(name: string): string[] {
  const words = name.split(/[-_.]+/).filter(Boolean);
  return words.length > 1 ? [folded(name), folded(words.slice(1).join('_'))] : [folded(name)];
}

/**
 * Finds the fact an SDK property stands for. The SDK names a secret `server.api_key` after its key (`apiKey`), its
 * whole name (`serverApiKey`) or its env var (`SERVER_API_KEY`: `serverApiKey` or `apiKey`), and a parameter by its
 * name (a nested one's path joined: `general.info_level` is `generalInfoLevel`), with or without a first word.
 * Names compare as letters and digits, case-insensitively.
 */
export function bindProperty(prop: string, facts: ServerFacts): Binding | undefined {
  const want = folded(prop);
  for (const [secret, env] of Object.entries(facts.secrets ?? {})) {
    const dot = secret.indexOf('.');
    const tail = dot < 0 ? secret : secret.slice(dot + 1);
    if ([folded(secret), ...spellings(tail), ...spellings(env)].includes(want)) return { kind: 'secret', secret, env };
  }
  for (const parameter of facts.parameters ?? []) if (folded(parameter) === want) return { kind: 'parameter', parameter };
  for (const parameter of facts.parameters ?? []) if (spellings(parameter).includes(want)) return { kind: 'parameter', parameter };
  return undefined;
}
