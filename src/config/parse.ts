import type { z } from 'zod';
import { SECRET_KEYS, stackConfigSchema, type StackConfig } from './schema';
import { keysAt } from './schema-walk';
import { levenshtein, showGiven, valueAt } from './given';

export const CONFIG_NAMESPACE = 'sandbox-kit';

/** One thing wrong with the stack config: where, what was given, what is accepted. */
export interface ConfigIssue {
  /** Full config key, e.g. `sandbox-kit:proxy.port`. */
  key: string;
  /** The value given, rendered for a message (undefined when the key is missing). */
  given: string;
  /** What is accepted there. */
  expected: string;
}

export type ParseResult = { ok: true; config: StackConfig } | { ok: false; issues: ConfigIssue[] };

export class ConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    super(formatIssues(issues));
    this.name = 'ConfigError';
  }
}

function keyOf(path: PropertyKey[]): string {
  const [top, ...rest] = path.map(String);
  let key = `${CONFIG_NAMESPACE}:${top ?? ''}`;
  for (const part of rest) key += /^\d+$/.test(part) ? `[${part}]` : `.${part}`;
  return key;
}

function unknownKey(path: readonly PropertyKey[], key: string): string {
  const known = keysAt(path) ?? [];
  // `pulumi config set sandbox-kit:proxy.port 9000` without --path stores a flat key named "proxy.port".
  const [section, ...rest] = key.split('.');
  if (path.length === 0 && rest.length > 0 && keysAt([section]) !== undefined) {
    return `a nested value: set it with \`pulumi config set --path 'sandbox-kit:${key}' VALUE\` (without --path Pulumi stores a flat key named "${key}")`;
  }
  const close = known.find((k) => k.toLowerCase() === key.toLowerCase()) ?? known.find((k) => levenshtein(k, key) <= 2);
  const hint = close ? `did you mean ${close}? ` : '';
  return `no such setting (${hint}known keys here: ${known.join(', ')}; docs/config.md lists every key)`;
}

/** What is accepted at a path, for zod's built-in messages ("Invalid input: expected object, received number"). */
function builtinExpectation(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    if (issue.expected === 'object') {
      const keys = keysAt(issue.path);
      return keys ? `a mapping of settings (${keys.join(', ')})` : 'a mapping';
    }
    if (issue.expected === 'array') return 'a list';
    return `a ${issue.expected}`;
  }
  if (issue.code === 'invalid_value') return `one of ${issue.values.map(String).join(', ')}`;
  return issue.message;
}

function toIssues(issue: z.core.$ZodIssue, raw: unknown): ConfigIssue[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({
      key: keyOf([...issue.path, k]),
      given: showGiven(valueAt(raw, [...issue.path, k])),
      expected: unknownKey(issue.path, k),
    }));
  }
  // Every field builder phrases its own message as "expected ..."; anything else is a zod default.
  const expected = issue.message.startsWith('expected ') ? issue.message.slice('expected '.length) : builtinExpectation(issue);
  return [{ key: keyOf(issue.path), given: showGiven(valueAt(raw, issue.path)), expected }];
}

/**
 * Validates the `sandbox-kit:` config (keys without the namespace) in one pass and reports every problem.
 * Secret keys are refused here: they must be read with `readSecret`, so they cannot leak into plain config.
 */
export function parseStackConfig(raw: Record<string, unknown>): ParseResult {
  const issues: ConfigIssue[] = [];
  const plain: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if ((SECRET_KEYS as readonly string[]).includes(k)) continue;
    plain[k] = v;
  }
  const result = stackConfigSchema.safeParse(plain);
  if (!result.success) issues.push(...result.error.issues.flatMap((issue) => toIssues(issue, plain)));
  return issues.length === 0 && result.success ? { ok: true, config: result.data } : { ok: false, issues };
}

/** Like parseStackConfig, but throws a ConfigError listing every issue. */
export function loadStackConfig(raw: Record<string, unknown>): StackConfig {
  const result = parseStackConfig(raw);
  if (!result.ok) throw new ConfigError(result.issues);
  return result.config;
}

/** The proxy password must be long and printable; its value never appears in a message. */
export function checkPassword(password: string | undefined, source: string): ConfigIssue[] {
  if (password === undefined || password === '') {
    return [{ key: source, given: '(missing)', expected: 'a secret of at least 16 printable ASCII characters' }];
  }
  if (password.length < 16 || !/^[\x21-\x7e]+$/.test(password)) {
    return [{ key: source, given: '(secret, not shown)', expected: 'at least 16 printable ASCII characters, no spaces' }];
  }
  return [];
}

export function formatIssues(issues: ConfigIssue[]): string {
  const lines = issues.map((i) => `  ${i.key}: got ${i.given}; expected ${i.expected}`);
  return `invalid stack config (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`;
}
