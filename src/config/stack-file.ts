import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_NAMESPACE } from './parse';

/** What a Pulumi.<stack>.yaml holds for the kit: plain values, and which secrets are set (still encrypted). */
export interface StackFile {
  path: string;
  values: Record<string, unknown>;
  /** Keys whose value is `{secure: ...}`: set, but only the Pulumi engine can decrypt them. */
  encrypted: string[];
}

export function stackFilePath(projectDir: string, stack: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(stack)) throw new Error(`invalid stack name ${JSON.stringify(stack)}: expected letters, digits, '.', '-' or '_'`);
  return join(projectDir, `Pulumi.${stack}.yaml`);
}

/** Reads the `sandbox-kit:` keys of a stack file, namespace stripped. Other namespaces (aws:, ...) are ignored. */
export function readStackFile(path: string): StackFile {
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read stack file ${path}: ${(err as Error).message}`);
  }
  const config = (doc as { config?: unknown } | null)?.config ?? {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new Error(`stack file ${path}: "config" must be a mapping of keys to values`);
  }
  const values: Record<string, unknown> = {};
  const encrypted: string[] = [];
  const prefix = `${CONFIG_NAMESPACE}:`;
  for (const [k, v] of Object.entries(config)) {
    if (!k.startsWith(prefix)) continue;
    const key = k.slice(prefix.length);
    if (typeof v === 'object' && v !== null && 'secure' in v) encrypted.push(key);
    else values[key] = v;
  }
  return { path, values, encrypted };
}
