import { isIPv4 } from 'node:net';
import { z } from 'zod';

/**
 * Field builders shared by the stack schema. Values set with `pulumi config set` arrive as strings,
 * values written in YAML keep their type: numbers and booleans accept both forms.
 *
 * Every builder reports every way a value can be wrong (wrong type, out of range, bad format) with one message,
 * `expected <what is accepted>`, and records the same text as the field's `accepts` metadata, so the error a user
 * sees and the config reference in docs/config.md say the same thing.
 */

/** Metadata key holding the human description of what a field accepts. */
export const ACCEPTS = 'accepts';

function accepting<T extends z.ZodType>(schema: T, what: string): T {
  return schema.meta({ [ACCEPTS]: what }) as T;
}

const decimal = /^-?\d+$/;

export function integer(min: number, max: number, what: string) {
  const error = `expected ${what}`;
  return accepting(
    z
      .union([z.number(), z.string().regex(decimal).transform(Number)], { error })
      .pipe(z.number().int({ error }).min(min, { error }).max(max, { error })),
    what,
  );
}

/** A decimal number from `min` to `max` (fractions allowed). */
export function fraction(min: number, max: number, what: string) {
  const error = `expected ${what}`;
  return accepting(
    z
      .union(
        [
          z.number(),
          z
            .string()
            .regex(/^\d+(\.\d+)?$/)
            .transform(Number),
        ],
        { error },
      )
      .pipe(z.number({ error }).min(min, { error }).max(max, { error })),
    what,
  );
}

export const port = () => integer(1, 65535, 'a TCP/UDP port, an integer from 1 to 65535');

export const flag = () =>
  accepting(
    z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], { error: 'expected true or false' }),
    'true or false',
  );

/** A string matching `pattern`; `what` says in words what that is. */
export function text(pattern: RegExp, what: string) {
  const error = `expected ${what}`;
  return accepting(z.string({ error }).regex(pattern, { error }), what);
}

/** One of a fixed list of strings. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, what = `one of ${values.join(', ')}`) {
  return accepting(z.enum(values, { error: `expected ${what}` }), what);
}

export function isCidr(value: string): boolean {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(value);
  return m !== null && isIPv4(m[1]) && Number(m[2]) <= 32;
}

const CIDR = 'an IPv4 CIDR such as 203.0.113.0/24';
export const cidr = () => accepting(z.string({ error: `expected ${CIDR}` }).refine(isCidr, { error: `expected ${CIDR}` }), CIDR);

const IPV4 = 'an IPv4 address such as 203.0.113.10';
export const ipv4 = () =>
  accepting(
    z.string({ error: `expected ${IPV4}` }).refine((v) => isIPv4(v), { error: `expected ${IPV4}` }),
    IPV4,
  );

const CIDR_LIST = 'a list of IPv4 CIDRs such as [198.51.100.0/24]';
export const cidrList = () => accepting(z.array(cidr(), { error: `expected ${CIDR_LIST}` }), CIDR_LIST);

const SSH_CIDR_LIST = 'a list of IPv4 CIDRs no wider than /8, such as [198.51.100.7/32]';
/**
 * Who may reach SSH. Each entry must be a CIDR of at most /8: SSH is never open to the whole internet (0.0.0.0/0),
 * and never to a slice of it wide enough to amount to the same.
 */
export const sshCidrList = () =>
  accepting(
    z.array(
      cidr().refine((v) => Number(v.split('/')[1]) >= 8, {
        error: 'expected a CIDR no wider than /8: SSH is never open to the whole internet',
      }),
      { error: `expected ${SSH_CIDR_LIST}` },
    ),
    SSH_CIDR_LIST,
  );

/** Each entry a CIDR; at least one (`0.0.0.0/0` for anyone). */
export const openCidrList = () => cidrList().min(1, { message: 'expected at least one CIDR (0.0.0.0/0 for anyone)' });

/** The most sandboxes a warm pool keeps of one template. */
export const WARM_POOL_MAX = 64;
const POOL_TEMPLATE = /^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,63}\/)?[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const WARM_POOL = `template names (or IDs), each with how many of its sandboxes to keep started, an integer from 0 to ${WARM_POOL_MAX}, such as {base: 2}; TEAM/TEMPLATE (TEAM a team's name or ID) names that team's own template`;
/** Sandboxes a platform keeps started per template, for creates to take (docs/platform.md#warm-pool). */
export const warmPoolSizes = () => {
  const error = `expected ${WARM_POOL}`;
  return accepting(
    z.record(
      z.string({ error }).regex(POOL_TEMPLATE, { error }),
      z
        .union([z.number(), z.string().regex(decimal).transform(Number)], { error })
        .pipe(z.number().int({ error }).min(0, { error }).max(WARM_POOL_MAX, { error })),
      { error },
    ),
    WARM_POOL,
  );
};
const WARM_POOL_ENTRY = `TEMPLATE=N: a template name (or ID; TEAM/TEMPLATE for a team's own) and how many of its sandboxes to keep started, an integer from 0 to ${WARM_POOL_MAX}`;
/** One `--warm-pool` flag: `base=2` -> ['base', 2]. */
export const warmPoolEntry = () => {
  const error = `expected ${WARM_POOL_ENTRY}`;
  return accepting(
    z
      .string({ error })
      .regex(new RegExp(`^${POOL_TEMPLATE.source.slice(1, -1)}=\\d{1,3}$`), { error })
      .transform((v): [string, number] => [v.slice(0, v.lastIndexOf('=')), Number(v.slice(v.lastIndexOf('=') + 1))])
      .refine(([, n]) => n <= WARM_POOL_MAX, { error }),
    WARM_POOL_ENTRY,
  );
};

const REGISTRY_LIST = 'a list of registry hosts with an optional port, such as [registry.internal:5000]';
const REGISTRY = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;
/** Image registries as `host[:port]`, lower-case (as image references name them). */
export const registryList = () =>
  accepting(
    z.array(z.string({ error: `expected ${REGISTRY_LIST}` }).regex(REGISTRY, { error: `expected ${REGISTRY_LIST}` }), {
      error: `expected ${REGISTRY_LIST}`,
    }),
    REGISTRY_LIST,
  );
