import type { z } from 'zod';
import { SECRET_KEYS, stackConfigSchema, type StackConfig } from './schema';

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

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function toIssues(issue: z.core.$ZodIssue): ConfigIssue[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({
      key: keyOf([...issue.path, k]),
      given: show((issue.input as Record<string, unknown> | undefined)?.[k]),
      expected: 'no such setting (check the spelling; the README lists every key)',
    }));
  }
  if (issue.code === 'invalid_value' && issue.values.length > 0) {
    return [{ key: keyOf(issue.path), given: show(issue.input), expected: `one of ${issue.values.map(String).join(', ')}` }];
  }
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // A union of "number or numeric string": the refined message is the one worth showing.
    const inner = issue.errors.flat().find((i) => i.message.startsWith('expected'));
    if (inner) return [{ key: keyOf(issue.path), given: show(issue.input), expected: inner.message.replace(/^expected /, '') }];
  }
  return [{ key: keyOf(issue.path), given: show(issue.input), expected: issue.message.replace(/^expected /, '') }];
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
  const result = stackConfigSchema.safeParse(plain, { reportInput: true });
  if (!result.success) issues.push(...result.error.issues.flatMap(toIssues));
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
