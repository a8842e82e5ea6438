/**
 * Extracts, once, the facts of the public tool-server catalog that the kit's catalog is generated from:
 *   node dist/scripts/mcp-registry-facts.js --registry DIR [--out templates/mcp/public-facts.json]
 * DIR is a git clone of the public catalog's repository (one `servers/<name>/server.yaml` per server). For every
 * server the installed E2B SDK's `McpServer` type names, it finds that server's file (servers removed since are read
 * at the commit before their removal) and keeps facts only: image, remote URL, arguments, env, secrets' env vars and
 * parameter names. Then run `npm run codegen`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { bindProperty, camelCase, type FactsFile, type ServerFacts } from './mcp-catalog/facts';
import { readSdkServers, type SdkServers } from './mcp-catalog/sdk-servers';

export const FACTS_FILE = 'templates/mcp/public-facts.json';

function git(dir: string, args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

type Yaml = Record<string, unknown>;

function asRecord(v: unknown): Yaml {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Yaml) : {};
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/** Parameter names, nested objects' as `parent.child` (the SDK flattens them into one camelCase name). */
function parameterNames(properties: Yaml, prefix = ''): string[] {
  const names: string[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    const nested = asRecord(asRecord(schema).properties);
    if (Object.keys(nested).length > 0) names.push(...parameterNames(nested, `${prefix}${name}.`));
    else names.push(`${prefix}${name}`);
  }
  return names;
}

/** The facts of one server.yaml document. */
export function factsOf(name: string, doc: Yaml, readAt?: string): ServerFacts {
  const run = asRecord(doc.run);
  const config = asRecord(doc.config);
  const facts: ServerFacts = { registry: name };
  if (readAt !== undefined) facts.readAt = readAt;
  if (doc.type === 'remote') {
    const remote = asRecord(doc.remote);
    const transport = String(remote.transport_type ?? asRecord(remote.transport).type ?? 'streamable-http');
    facts.remote = { url: String(remote.url), transport: transport === 'sse' ? 'sse' : 'streamable-http' };
    const headers = asRecord(remote.headers);
    if (Object.keys(headers).length > 0) facts.remote.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
  } else if (typeof doc.image === 'string') facts.image = doc.image;
  const command = strings(run.command);
  if (command.length > 0) facts.command = command;
  const env: Record<string, string> = {};
  for (const e of Array.isArray(config.env) ? config.env : []) {
    const entry = asRecord(e);
    if (typeof entry.name === 'string' && entry.value !== undefined) env[entry.name] = String(entry.value);
  }
  for (const [k, v] of Object.entries(asRecord(run.env))) env[k] = String(v);
  if (Object.keys(env).length > 0) facts.env = env;
  const secrets: Record<string, string> = {};
  for (const s of Array.isArray(config.secrets) ? config.secrets : []) {
    const entry = asRecord(s);
    if (typeof entry.name === 'string' && typeof entry.env === 'string') secrets[entry.name] = entry.env;
  }
  if (Object.keys(secrets).length > 0) facts.secrets = secrets;
  const parameters = parameterNames(asRecord(asRecord(config.parameters).properties));
  if (parameters.length > 0) facts.parameters = parameters;
  return facts;
}

/** Names under which a registry server may appear in the SDK: its camelCase name, with or without "-mcp-server". */
function sdkNamesOf(registry: string): string[] {
  const names = new Set([camelCase(registry)]);
  for (const suffix of ['-mcp-server', '-mcp', '-server'])
    if (registry.endsWith(suffix)) names.add(camelCase(registry.slice(0, -suffix.length)));
  for (const prefix of ['mcp-server-', 'mcp-']) if (registry.startsWith(prefix)) names.add(camelCase(registry.slice(prefix.length)));
  return [...names];
}

/** Every server file of the repository: the current ones, then those removed (at the commit before removal). */
function registryFiles(dir: string): { name: string; read(): Yaml; readAt?: string }[] {
  const out: { name: string; read(): Yaml; readAt?: string }[] = [];
  const seen = new Set<string>();
  for (const line of git(dir, ['ls-tree', '-d', '--name-only', 'HEAD', 'servers/']).split('\n').filter(Boolean)) {
    const name = path.basename(line);
    seen.add(name);
    out.push({ name, read: () => parseYaml(git(dir, ['show', `HEAD:servers/${name}/server.yaml`])) as Yaml });
  }
  let commit = '';
  const log = git(dir, ['log', '--no-renames', '--diff-filter=D', '--name-only', '--format=C %H', 'HEAD', '--', 'servers/*/server.yaml']);
  for (const line of log.split('\n')) {
    if (line.startsWith('C ')) commit = line.slice(2);
    const m = /^servers\/([^/]+)\/server\.yaml$/.exec(line);
    if (m === null || seen.has(m[1])) continue;
    seen.add(m[1]);
    const at = commit;
    out.push({ name: m[1], readAt: `${at}^`, read: () => parseYaml(git(dir, ['show', `${at}^:servers/${m[1]}/server.yaml`])) as Yaml });
  }
  return out;
}

/** Picks, for each SDK server, the registry server that binds most of its properties (current ones first on a tie). */
export function extractFacts(dir: string, sdk: SdkServers): FactsFile {
  const candidates = new Map<string, ReturnType<typeof registryFiles>>();
  for (const file of registryFiles(dir)) {
    for (const n of sdkNamesOf(file.name)) candidates.set(n, [...(candidates.get(n) ?? []), file]);
  }
  const servers: Record<string, ServerFacts> = {};
  const missing: string[] = [];
  for (const [name, props] of Object.entries(sdk)) {
    let best: { facts: ServerFacts; score: number } | undefined;
    for (const file of candidates.get(name) ?? []) {
      const facts = factsOf(file.name, file.read(), file.readAt === undefined ? undefined : git(dir, ['rev-parse', file.readAt]).trim());
      const score = Object.keys(props).filter((p) => bindProperty(p, facts) !== undefined).length;
      if (best === undefined || score > best.score) best = { facts, score };
    }
    if (best === undefined) missing.push(name);
    else servers[name] = best.facts;
  }
  if (missing.length > 0) throw new Error(`no server file found for ${missing.join(', ')}`);
  return { source: { repository: 'docker/mcp-registry', commit: git(dir, ['rev-parse', 'HEAD']).trim() }, servers };
}

function main(): number {
  const { values } = parseArgs({ options: { registry: { type: 'string' }, out: { type: 'string' } }, strict: true });
  if (values.registry === undefined) {
    console.error('mcp-registry-facts: --registry DIR (a git clone of the public catalog) is required');
    return 2;
  }
  const out = values.out ?? path.join(path.resolve(__dirname, '..', '..'), FACTS_FILE);
  const facts = extractFacts(values.registry, readSdkServers());
  fs.writeFileSync(out, `${JSON.stringify(facts, null, 2)}\n`);
  console.log(`mcp-registry-facts: ${Object.keys(facts.servers).length} servers -> ${out}`);
  return 0;
}

if (require.main === module) {
  try {
    process.exitCode = main();
  } catch (err) {
    console.error(`mcp-registry-facts: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
