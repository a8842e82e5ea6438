import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_NAMESPACE, type ConfigIssue } from './parse';
import { SECRET_KEYS } from './schema';

/** What a Pulumi.<stack>.yaml holds for the kit: plain values, and which secrets are set (still encrypted). */
export interface StackFile {
  path: string;
  values: Record<string, unknown>;
  /** Keys whose value is `{secure: ...}`: set, but only the Pulumi engine can decrypt them. */
  encrypted: string[];
}

export function stackFilePath(projectDir: string, stack: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(stack))
    throw new Error(`invalid stack name ${JSON.stringify(stack)}: expected letters, digits, '.', '-' or '_'`);
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

/**
 * Problems the schema cannot see because they are about how a value is stored: a secret written in plain text
 * (it would sit readable in the repository) and a plain setting stored encrypted (the CLI cannot read it, so it
 * would silently fall back to its default).
 */
export function stackFileIssues(file: StackFile): ConfigIssue[] {
  const secrets: readonly string[] = SECRET_KEYS;
  const issues: ConfigIssue[] = [];
  for (const key of secrets) {
    if (key in file.values) {
      issues.push({
        key: `${CONFIG_NAMESPACE}:${key}`,
        given: '(plain text, not shown)',
        expected: `an encrypted secret: remove it from ${file.path} and run \`pulumi config set --secret ${CONFIG_NAMESPACE}:${key}\``,
      });
    }
  }
  for (const key of file.encrypted) {
    if (!secrets.includes(key)) {
      issues.push({
        key: `${CONFIG_NAMESPACE}:${key}`,
        given: '(encrypted)',
        expected: `a plain value: only ${secrets.join(' and ')} are secrets; set it again without --secret`,
      });
    }
  }
  return issues;
}
