import type { z } from 'zod';
import { ApiError } from './types';

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

/**
 * Parses a request part with its schema, or throws a 400 naming every problem at once: the field, what was given,
 * what is accepted (the schema's message).
 */
export function validate<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    const given = issue.code === 'unrecognized_keys' ? '' : ` (given ${show(valueAt(raw, issue.path))})`;
    return `${field === '' ? what : `${what} field "${field}"`}: ${issue.message}${given}`;
  });
  throw new ApiError(400, problems.join('; '));
}
