import { placeholders, type PropertyType } from '../../src/mcp/catalog/schema';
import { bindProperty, type Binding, type FactsFile, type ServerFacts } from './facts';
import type { SdkProperty, SdkServers } from './sdk-servers';

/**
 * The public catalog in the kit's catalog format, from the SDK's servers (names, property types, required flags) and
 * the facts (image or remote URL, arguments, env, secrets). Pure: the codegen writes its result to
 * templates/mcp/public-catalog.json and a test compares that file with it.
 */

interface PropertyDoc {
  type: PropertyType;
  required: boolean;
  secret?: true;
  via: { kind: 'env'; name: string } | { kind: 'args' } | { kind: 'template' };
}

interface EntryDoc {
  description: string;
  run:
    | { image: { ref: string; args: string[]; env: Record<string, string> } }
    | { remote: { url: string; transport: 'sse' | 'streamable-http'; headers: Record<string, string> } };
  properties: Record<string, PropertyDoc>;
}

/** A port is written as a number or a string (`5432`, `"5432"`): every other type is the SDK's own. */
function propertyType(prop: string, p: SdkProperty): PropertyType {
  return p.type === 'number' && /(^p|P)ort$/.test(prop) ? 'string|number' : p.type;
}

const fold = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Rewrites the public catalog's `{{server.param|filters}}` and `$ENV` / `${ENV}` of secrets as `{{prop|filters}}`. */
function rewrite(text: string, byParameter: Map<string, string>, bySecretEnv: Map<string, string>, server: string): string {
  const out = text.replace(/\{\{\s*([^}|\s]+)\s*((?:\|[a-z-]+)*)\s*\}\}/g, (_all, ref: string, filters: string) => {
    const dot = ref.indexOf('.');
    const param = dot < 0 ? ref : ref.slice(dot + 1);
    const prop = byParameter.get(fold(param));
    if (prop === undefined) throw new Error(`${server}: template ${ref} names no property the SDK has`);
    // volume-target is the path itself inside a sandbox (no volume to mount); into spreads a list.
    const kept = filters.split('|').filter((f) => f === 'into');
    return `{{${prop}${kept.map((f) => `|${f}`).join('')}}}`;
  });
  return out.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (all, env: string) => {
    const prop = bySecretEnv.get(env);
    return prop === undefined ? all : `{{${prop}}}`;
  });
}

/**
 * Leaves out of argv every argument that would carry a secret (and the flag before it): argv is visible to every
 * process in the sandbox, and the secret still reaches the server in its env var.
 */
function withoutSecrets(args: string[], properties: Record<string, PropertyDoc>): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (placeholders(arg).some((p) => properties[p]?.secret)) {
      if (out.length > 0 && /^-[^=]*$/.test(out[out.length - 1]) && !arg.startsWith('-')) out.pop();
      continue;
    }
    out.push(arg);
  }
  return out;
}

function entryOf(name: string, props: Record<string, SdkProperty>, facts: ServerFacts): EntryDoc {
  const bindings = new Map<string, Binding>();
  for (const prop of Object.keys(props)) {
    const binding = bindProperty(prop, facts);
    if (binding === undefined) throw new Error(`${name}.${prop}: no secret or parameter of ${facts.registry} matches it`);
    bindings.set(prop, binding);
  }
  const byParameter = new Map<string, string>();
  const bySecretEnv = new Map<string, string>();
  for (const [prop, b] of bindings) {
    if (b.kind === 'parameter') byParameter.set(fold(b.parameter), prop);
    else bySecretEnv.set(b.env, prop);
  }
  const properties: Record<string, PropertyDoc> = {};
  for (const [prop, p] of Object.entries(props)) {
    const b = bindings.get(prop) as Binding;
    const doc: PropertyDoc = { type: propertyType(prop, p), required: p.required, via: { kind: 'template' } };
    if (b.kind === 'secret') {
      doc.secret = true;
      // A remote server gets its secrets in headers only; an image's secrets travel in their env vars.
      doc.via = facts.remote === undefined ? { kind: 'env', name: b.env } : { kind: 'template' };
    }
    properties[prop] = doc;
  }
  const rw = (text: string) => rewrite(text, byParameter, bySecretEnv, name);
  if (facts.remote !== undefined) {
    const headers = Object.fromEntries(Object.entries(facts.remote.headers ?? {}).map(([k, v]) => [k, rw(v)]));
    return {
      description: `Served over HTTP by its vendor at ${new URL(facts.remote.url).host} (public catalog: ${facts.registry}).`,
      run: { remote: { url: rw(facts.remote.url), transport: facts.remote.transport, headers } },
      properties,
    };
  }
  if (facts.image === undefined) throw new Error(`${name}: the facts name neither an image nor a remote URL`);
  const env = Object.fromEntries(Object.entries(facts.env ?? {}).map(([k, v]) => [k, rw(v)]));
  return {
    description: `Runs the OCI image ${facts.image} (public catalog: ${facts.registry}).`,
    run: { image: { ref: facts.image, args: withoutSecrets((facts.command ?? []).map(rw), properties), env } },
    properties,
  };
}

/** Every SDK server, in the SDK's order; throws naming each server the facts do not cover. */
export function buildPublicCatalog(sdk: SdkServers, facts: FactsFile): Record<string, EntryDoc> {
  const out: Record<string, EntryDoc> = {};
  const problems: string[] = [];
  for (const [name, props] of Object.entries(sdk)) {
    const f = facts.servers[name];
    if (f === undefined) {
      problems.push(`${name}: not in the facts file (re-run scripts/mcp-registry-facts.ts)`);
      continue;
    }
    try {
      out[name] = entryOf(name, props, f);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0) throw new Error(`cannot build the public catalog:\n  ${problems.join('\n  ')}`);
  return out;
}
