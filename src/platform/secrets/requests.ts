/**
 * The bodies of the secret endpoints as E2B's SDK sends them (`NewSecret`, `SecretUpdate`), and the rules of a
 * secret's name, value and metadata, each said once here: it is both the check and the error message.
 *
 * A value is never echoed: it is checked here by hand, and its errors say what is wrong without showing it.
 */
import { z } from 'zod';
import { ApiError } from '../http/types';

/** What makes a secret's ID (`sec_` and 20 lower-case letters and digits); no name may start so. */
export const SECRET_ID_PREFIX = 'sec_';

export const SECRET_NAME_RULE =
  '1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit and not with "sec_" (kept for secret IDs); names are lower-cased';
const NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;

/** A name as stored (lower-cased), or undefined when it breaks the rule. */
export function canonicalSecretName(name: string): string | undefined {
  const lower = name.toLowerCase();
  return NAME.test(lower) && !lower.startsWith(SECRET_ID_PREFIX) ? lower : undefined;
}

export const METADATA_LIMITS = { entries: 32, keyBytes: 128, valueBytes: 1024, totalBytes: 8192 } as const;
const METADATA_RULE = `an object of strings: at most ${METADATA_LIMITS.entries} entries, keys of 1 to ${METADATA_LIMITS.keyBytes} bytes, values of at most ${METADATA_LIMITS.valueBytes} bytes, ${METADATA_LIMITS.totalBytes} bytes in all`;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const metadataSchema = z
  .record(z.string(), z.string({ message: `expected ${METADATA_RULE}` }), { message: `expected ${METADATA_RULE}` })
  .superRefine((m, ctx) => {
    const entries = Object.entries(m);
    if (entries.length > METADATA_LIMITS.entries)
      ctx.addIssue({ code: 'custom', message: `${entries.length} entries; expected ${METADATA_RULE}` });
    let total = 0;
    for (const [k, v] of entries) {
      total += bytes(k) + bytes(v);
      if (bytes(k) === 0 || bytes(k) > METADATA_LIMITS.keyBytes)
        ctx.addIssue({ code: 'custom', path: [k], message: `the key is ${bytes(k)} bytes; expected ${METADATA_RULE}` });
      if (bytes(v) > METADATA_LIMITS.valueBytes)
        ctx.addIssue({ code: 'custom', path: [k], message: `the value is ${bytes(v)} bytes; expected ${METADATA_RULE}` });
    }
    if (total > METADATA_LIMITS.totalBytes) ctx.addIssue({ code: 'custom', message: `${total} bytes in all; expected ${METADATA_RULE}` });
  });

const keysError = (keys: string[]) => (issue: { code: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys'
    ? `unknown key ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')}: the accepted keys are ${keys.join(', ')}`
    : issue.code === 'invalid_type'
      ? `expected an object with ${keys.join(', ')}`
      : undefined;

export const newSecretSchema = z.strictObject(
  {
    name: z
      .string({ message: `expected a secret name of ${SECRET_NAME_RULE}` })
      .refine((n) => canonicalSecretName(n) !== undefined, { message: `expected a secret name of ${SECRET_NAME_RULE}` })
      .transform((n) => canonicalSecretName(n) as string),
    value: z.unknown(),
    metadata: metadataSchema.nullable().optional(),
  },
  { error: keysError(['name', 'value', 'metadata']) },
);

export const secretUpdateSchema = z.strictObject(
  { value: z.unknown(), metadata: metadataSchema.nullable().optional() },
  { error: keysError(['value', 'metadata']) },
);

/** The largest value: it is sent in a request header, where servers seldom take more. */
export const MAX_VALUE_BYTES = 16 * 1024;
const VALUE_RULE = `expected the secret's value: a string of 1 to ${MAX_VALUE_BYTES} bytes without control characters other than tab (it is placed in HTTP request headers)`;

/** Checks a value without ever showing it: a 400 that says only what is wrong. */
export function secretValueOf(value: unknown): string {
  if (typeof value !== 'string')
    throw new ApiError(
      400,
      `body field "value": ${VALUE_RULE} (given ${value === undefined ? 'nothing' : `a ${value === null ? 'null' : typeof value}`})`,
    );
  const size = bytes(value);
  if (size === 0 || size > MAX_VALUE_BYTES) throw new ApiError(400, `body field "value": ${VALUE_RULE} (given ${size} bytes)`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value))
    throw new ApiError(400, `body field "value": ${VALUE_RULE} (given one with a control character)`);
  return value;
}
