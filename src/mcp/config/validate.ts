import type { z } from 'zod';
import type { McpServers } from '../generated/servers';
import { builtinCatalog } from '../catalog/load';
import type { Catalog, CatalogEntry } from '../catalog/schema';
import { CUSTOM_NAME, customServerSchema, serverSchema, TYPE_WORDS } from './server-schema';
import { levenshtein, showGiven, valueAt } from '../../config/given';

/** A user-defined server: a shell command that starts a stdio MCP server. */
export interface CustomServer {
  runCmd: string;
  installCmd?: string;
  envs?: Record<string, string>;
}

/** The `mcp` option: catalog servers by name (checked by the compiler through the generated types), plus `custom`. */
export type McpConfig = McpServers & { custom?: Record<string, CustomServer> };

/** A validated config: catalog servers under their canonical names (aliases resolved). */
export interface ValidMcpConfig {
  servers: Record<string, Record<string, unknown>>;
  custom: Record<string, CustomServer>;
}

/** One thing wrong with an `mcp` config: the server, the key, what was given and what is expected. */
export interface McpConfigIssue {
  /** Where, e.g. `mcp.filesystem.paths`. */
  key: string;
  /** The server named (undefined when the whole config is wrong). */
  server?: string;
  given: string;
  expected: string;
}

export type McpValidation = { ok: true; config: ValidMcpConfig } | { ok: false; issues: McpConfigIssue[] };

export class McpConfigError extends Error {
  constructor(readonly issues: McpConfigIssue[]) {
    super(formatMcpIssues(issues));
    this.name = 'McpConfigError';
  }
}

export function formatMcpIssues(issues: McpConfigIssue[]): string {
  const lines = issues.map((i) => `  ${i.key}: got ${i.given}; expected ${i.expected}`);
  return `invalid mcp config (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`;
}

const SECRET_SHOWN = '(secret, not shown)';

function keyOf(parts: PropertyKey[]): string {
  let key = 'mcp';
  for (const part of parts) key += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  return key;
}

function closest(name: string, known: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    if (k.toLowerCase() === lower) return k;
    // Only compare names of similar length: a 250-entry catalog stays cheap.
    if (Math.abs(k.length - name.length) > 2) continue;
    const d = levenshtein(k.toLowerCase(), lower);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Name -> entry, aliases included, built once per catalog. */
const indexes = new WeakMap<Catalog, Map<string, { name: string; entry: CatalogEntry }>>();
function indexOf(catalog: Catalog) {
  let index = indexes.get(catalog);
  if (index === undefined) {
    index = new Map();
    for (const [name, entry] of Object.entries(catalog)) {
      index.set(name, { name, entry });
      for (const alias of entry.aliases ?? []) index.set(alias, { name, entry });
    }
    indexes.set(catalog, index);
  }
  return index;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function serverIssues(name: string, given: string, entry: CatalogEntry, error: z.ZodError, raw: unknown): McpConfigIssue[] {
  const issues: McpConfigIssue[] = [];
  const known = Object.keys(entry.properties);
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const near = closest(k, known);
        const hint = near ? `did you mean ${near}? ` : '';
        const list = known.length === 0 ? `${name} takes no properties` : `properties of ${name}: ${known.join(', ')}`;
        issues.push({
          key: keyOf([given, k]),
          server: name,
          given: showGiven(valueAt(raw, [k])),
          expected: `no such property (${hint}${list})`,
        });
      }
      continue;
    }
    const [prop] = issue.path;
    const property = typeof prop === 'string' ? entry.properties[prop] : undefined;
    const value = valueAt(raw, issue.path);
    const shown = property?.secret && value !== undefined ? SECRET_SHOWN : showGiven(value);
    let expected = issue.message.startsWith('expected ') ? issue.message.slice('expected '.length) : issue.message;
    if (property !== undefined && value === undefined && issue.path.length === 1) expected = `${TYPE_WORDS[property.type]} (required)`;
    issues.push({ key: keyOf([given, ...issue.path]), server: name, given: shown, expected });
  }
  return issues;
}

function validateCustom(raw: unknown, issues: McpConfigIssue[]): Record<string, CustomServer> {
  const out: Record<string, CustomServer> = {};
  if (!isMapping(raw)) {
    issues.push({ key: 'mcp.custom', given: showGiven(raw), expected: 'a mapping of server names to { runCmd, installCmd?, envs? }' });
    return out;
  }
  for (const [name, value] of Object.entries(raw)) {
    if (!CUSTOM_NAME.test(name)) {
      issues.push({
        key: keyOf(['custom', name]),
        server: name,
        given: showGiven(name),
        expected: 'a name of letters, digits, "-" and single "_", starting with a letter',
      });
      continue;
    }
    const result = customServerSchema.safeParse(value);
    if (result.success) {
      out[name] = result.data;
      continue;
    }
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const k of issue.keys) {
          issues.push({
            key: keyOf(['custom', name, k]),
            server: name,
            given: showGiven(valueAt(value, [k])),
            expected: 'no such key (a custom server takes runCmd, installCmd, envs)',
          });
        }
        continue;
      }
      const given = valueAt(value, issue.path);
      // Custom env values often hold tokens: never echo them.
      const shown = issue.path[0] === 'envs' && issue.path.length > 1 && given !== undefined ? SECRET_SHOWN : showGiven(given);
      const expected = issue.message.startsWith('expected ') ? issue.message.slice('expected '.length) : issue.message;
      issues.push({ key: keyOf(['custom', name, ...issue.path]), server: name, given: shown, expected });
    }
  }
  return out;
}

/**
 * Validates an `mcp` config against a catalog and reports every problem at once: unknown servers (with the nearest
 * name), unknown keys, wrong types and missing required keys, each naming the server and the key. Secret values are
 * never echoed. Aliases (e.g. `sequentialthinking`) resolve to the catalog's name.
 */
export function validateMcpConfig(input: unknown, catalog: Catalog = builtinCatalog()): McpValidation {
  const issues: McpConfigIssue[] = [];
  const config: ValidMcpConfig = { servers: {}, custom: {} };
  if (!isMapping(input)) {
    return { ok: false, issues: [{ key: 'mcp', given: showGiven(input), expected: 'a mapping of server names to their settings' }] };
  }
  const index = indexOf(catalog);
  for (const [given, value] of Object.entries(input)) {
    if (given === 'custom') {
      config.custom = validateCustom(value, issues);
      continue;
    }
    const found = index.get(given);
    if (found === undefined) {
      const near = closest(given, index.keys());
      const hint = near ? `did you mean ${near}? ` : '';
      const github = given.startsWith('github/')
        ? 'servers cloned from GitHub are not supported; put the server under custom with its runCmd; '
        : '';
      issues.push({
        key: keyOf([given]),
        server: given,
        given: showGiven(value),
        expected: `a server of the catalog or custom (${github}${hint}${Object.keys(catalog).length} servers known; \`sandbox-kit mcp list\` shows them)`,
      });
      continue;
    }
    if (config.servers[found.name] !== undefined) {
      issues.push({
        key: keyOf([given]),
        server: found.name,
        given: showGiven(given),
        expected: `${found.name} only once (${given} is another name for it)`,
      });
      continue;
    }
    const result = serverSchema(found.entry).safeParse(value ?? {});
    if (result.success) config.servers[found.name] = result.data as Record<string, unknown>;
    else issues.push(...serverIssues(found.name, given, found.entry, result.error, value));
  }
  return issues.length === 0 ? { ok: true, config } : { ok: false, issues };
}

/** Like validateMcpConfig, but throws an McpConfigError listing every issue. */
export function parseMcpConfig(input: unknown, catalog?: Catalog): ValidMcpConfig {
  const result = validateMcpConfig(input, catalog);
  if (!result.ok) throw new McpConfigError(result.issues);
  return result.config;
}
