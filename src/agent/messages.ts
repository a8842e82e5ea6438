/**
 * Request messages (spec 2.4) as protobuf's JSON mapping reads them: unknown fields are errors, `null` means the
 * field's default, and a uint32 may also come as a decimal string. Anything else is `invalid_argument` naming
 * the field and what it accepts.
 */
import { z } from 'zod';
import { AgentError } from './errors';

const MAX_UINT32 = 4294967295;

const pathField = z
  .string({ error: 'expected a string' })
  .nullish()
  .transform((v) => v ?? '');

const uint32Field = z
  .union([z.number().int().min(0).max(MAX_UINT32), z.string().regex(/^\d{1,10}$/).transform(Number).pipe(z.number().max(MAX_UINT32))], {
    error: `expected an integer from 0 to ${MAX_UINT32} (a JSON number or a decimal string)`,
  })
  .nullish()
  .transform((v) => v ?? 0);

export const statRequestSchema = z.strictObject({ path: pathField });
export const listDirRequestSchema = z.strictObject({ path: pathField, depth: uint32Field });

export type StatRequest = z.output<typeof statRequestSchema>;
export type ListDirRequest = z.output<typeof listDirRequestSchema>;

/** Validates a parsed JSON body against a request schema; throws `invalid_argument` with every problem. */
export function decodeRequest<S extends z.ZodType>(schema: S, body: unknown, messageName: string): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AgentError('invalid_argument', `${messageName} must be a JSON object`);
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    const field = issue.path.length ? `field ${JSON.stringify(issue.path.join('.'))}` : 'body';
    return `${field}: ${issue.message}`;
  });
  const known = Object.keys((schema as unknown as z.ZodObject).shape).join(', ');
  throw new AgentError('invalid_argument', `invalid ${messageName}: ${problems.join('; ')} (fields: ${known})`);
}
