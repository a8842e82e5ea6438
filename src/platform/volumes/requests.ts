/** The bodies and queries of the volume endpoints and the volume file API, as E2B's SDK sends them. */
import { z } from 'zod';

const NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';
export const newVolumeSchema = z.object({
  name: z.string({ message: `expected a volume name of ${NAME_RULE}` }).regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: `expected a volume name of ${NAME_RULE}`,
  }),
});

/** A whole number in a query string. */
const wholeNumber = (what: string, max: number) =>
  z
    .string()
    .regex(/^[0-9]{1,10}$/, { message: `expected ${what}: a whole number from 0 to ${max}` })
    .transform(Number)
    .pipe(z.number().max(max, { message: `expected ${what}: a whole number from 0 to ${max}` }));

const boolean = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((v) => v === 'true');
const path = z.string({ message: 'expected a path in the volume, e.g. "/notes.txt"' });

/** The most levels a listing descends. */
export const MAX_LIST_DEPTH = 32;

export const listQuerySchema = z.object({
  path,
  depth: wholeNumber('a depth', MAX_LIST_DEPTH)
    .pipe(z.number().min(1, { message: `expected a depth: a whole number from 1 to ${MAX_LIST_DEPTH}` }))
    .default(1),
});

export const pathQuerySchema = z.object({ path });

/** Owner and mode: ids inside the sandboxes (checked against their range by the service), mode as a number (0o644 is 420). */
const ownership = {
  uid: wholeNumber('a uid', 4_294_967_295).optional(),
  gid: wholeNumber('a gid', 4_294_967_295).optional(),
  mode: wholeNumber('a mode (the permission bits as a number, e.g. 420 for 0o644)', 0o7777).optional(),
};

export const writeQuerySchema = z.object({ path, ...ownership, force: boolean.optional() });

export const metadataBodySchema = z
  .object({
    uid: z.number().int().min(0).optional(),
    gid: z.number().int().min(0).optional(),
    mode: z.number().int().min(0).max(0o7777, { message: 'expected the permission bits as a number, at most 4095 (0o7777)' }).optional(),
  })
  .strict();
