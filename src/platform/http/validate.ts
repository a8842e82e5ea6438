import type { z } from 'zod';
import { showGiven, valueAt } from '../../config/given';
import { ApiError } from './types';

/**
 * Parses a request part with its schema, or throws a 400 naming every problem at once: the field, what was given,
 * what is accepted (the schema's message).
 */
export function validate<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    const given = issue.code === 'unrecognized_keys' ? '' : ` (given ${showGiven(valueAt(raw, issue.path), 60)})`;
    return `${field === '' ? what : `${what} field "${field}"`}: ${issue.message}${given}`;
  });
  throw new ApiError(400, problems.join('; '));
}
