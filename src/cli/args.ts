/**
 * The one way a command reads its flags. Each flag is declared with a field builder of src/config/fields.ts (the
 * same ones the stack config uses), so a flag and a config key say alike what they accept. Parsing reports every
 * bad flag at once, each named `--flag` with what was given and what is accepted, as a UsageError: the CLI prints it
 * and exits 2 (a usage error), where a failure of the command itself exits 1.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { ConfigIssue } from '../config';

/** Bad command-line input: exit status 2. */
export class UsageError extends Error {
  constructor(
    readonly command: string,
    readonly issues: ConfigIssue[],
  ) {
    super(formatFlagIssues(command, issues));
    this.name = 'UsageError';
  }
}

export function formatFlagIssues(command: string, issues: readonly ConfigIssue[]): string {
  const lines = issues.map((i) => `  ${i.key}: got ${i.given}; expected ${i.expected}`);
  const head = `${command}: ${issues.length === 1 ? 'a bad argument' : `${issues.length} bad arguments`}`;
  return `${head}:\n${lines.join('\n')}\nRun 'sandbox-kit ${command} --help' for its options.`;
}

interface FlagBase<T> {
  kind: 'string' | 'boolean' | 'list';
  schema: z.ZodType<T, unknown>;
  short?: string;
}
export type Flag<T> = FlagBase<T>;

/** A flag with a value (`--port 8080` or `--port=8080`), checked by `schema` (a field builder, made optional or defaulted). */
export function valueFlag<T>(schema: z.ZodType<T, unknown>): Flag<T> {
  return { kind: 'string', schema };
}

/** A switch: present or not. */
export function switchFlag(short?: string): Flag<boolean> {
  return { kind: 'boolean', schema: z.boolean().default(false), ...(short ? { short } : {}) };
}

/** A repeatable flag (`--host-network A --host-network B`), each value checked by `item`. */
export function listFlag<T>(item: z.ZodType<T, unknown>): Flag<T[]> {
  return { kind: 'list', schema: z.array(item).default([]) as unknown as z.ZodType<T[], unknown> };
}

/** A value flag that must be given; `what` says what it is (shown when it is missing). */
export function requiredFlag<T>(schema: z.ZodType<T, unknown>, what: string): Flag<T> {
  const error = `expected ${what}`;
  return valueFlag(
    z
      .string({ error })
      .min(1, { error })
      .pipe(schema as z.ZodType<T, string>),
  );
}

export type FlagSpec = Record<string, Flag<unknown>>;
export type FlagValues<S extends FlagSpec> = { [K in keyof S]: S[K] extends Flag<infer T> ? T : never };

export interface ParsedFlags<S extends FlagSpec> {
  values: FlagValues<S>;
  positionals: string[];
  /** `--help` or `-h` was given: the command prints its usage and exits 0, whatever else is wrong. */
  help: boolean;
}

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  return JSON.stringify(value);
}

function expectedOf(issue: z.core.$ZodIssue): string {
  if (issue.message.startsWith('expected ')) return issue.message.slice('expected '.length);
  if (issue.code === 'invalid_value') return `one of ${issue.values.map(String).join(', ')}`;
  return issue.message;
}

/**
 * Parses `argv` against `spec`. `positionals` says how many plain arguments the command takes (default none) and
 * what they are, for the message when the count is wrong.
 */
export function parseFlags<S extends FlagSpec>(
  command: string,
  argv: readonly string[],
  spec: S,
  positionals: { min: number; max: number; what: string } = { min: 0, max: 0, what: 'no arguments' },
): ParsedFlags<S> {
  const accepted = Object.keys(spec)
    .map((f) => `--${f}`)
    .join(', ');
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, flag] of Object.entries(spec)) {
    options[name] = {
      type: flag.kind === 'boolean' ? 'boolean' : 'string',
      ...(flag.kind === 'list' ? { multiple: true } : {}),
      ...(flag.short ? { short: flag.short } : {}),
    };
  }
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });

  const issues: ConfigIssue[] = [];
  const raw: Record<string, unknown> = {};
  const plain: string[] = [];
  let help = false;
  // An unknown flag's value is reported with it, not again as a stray argument (`--colour red`).
  const swallowed = new Set<number>();
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (!swallowed.has(token.index)) plain.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    const name = token.name;
    if (name === 'help') {
      help = true;
      continue;
    }
    const flag = spec[name];
    if (!flag) {
      let given = token.value;
      const next = tokens.find((t) => t.index === token.index + 1);
      if (given === undefined && token.inlineValue !== true && next?.kind === 'positional') {
        given = next.value;
        swallowed.add(next.index);
      }
      issues.push({
        key: token.rawName,
        given: given === undefined ? '(a switch)' : show(given),
        expected: `one of ${accepted || 'no flags'}`,
      });
      continue;
    }
    if (flag.kind === 'boolean') {
      if (token.value !== undefined) issues.push({ key: `--${name}`, given: show(token.value), expected: 'no value (it is a switch)' });
      else raw[name] = true;
      continue;
    }
    if (token.value === undefined) {
      issues.push({ key: `--${name}`, given: '(no value)', expected: 'a value after the flag' });
      continue;
    }
    if (flag.kind === 'list') raw[name] = [...((raw[name] as string[] | undefined) ?? []), token.value];
    else if (name in raw)
      issues.push({ key: `--${name}`, given: `${show(raw[name])} and ${show(token.value)}`, expected: 'the flag once' });
    else raw[name] = token.value;
  }
  if (plain.length < positionals.min || plain.length > positionals.max) {
    issues.push({ key: 'arguments', given: plain.length === 0 ? '(none)' : show(plain), expected: positionals.what });
  }

  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(spec)) {
    if (issues.some((i) => i.key === `--${name}`)) continue;
    const result = flag.schema.safeParse(raw[name]);
    if (result.success) {
      values[name] = result.data;
      continue;
    }
    for (const issue of result.error.issues) {
      const given = issue.path.length > 0 ? show((raw[name] as unknown[])[Number(issue.path[0])]) : show(raw[name]);
      issues.push({ key: `--${name}`, given, expected: expectedOf(issue) });
    }
  }
  if (issues.length > 0 && !help) throw new UsageError(command, issues);
  return { values: values as FlagValues<S>, positionals: plain, help };
}
