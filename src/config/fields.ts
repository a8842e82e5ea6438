import { isIPv4 } from 'node:net';
import { z } from 'zod';

/**
 * Field builders shared by the stack schema. Values set with `pulumi config set` arrive as strings,
 * values written in YAML keep their type: numbers and booleans accept both forms.
 */

const decimal = /^-?\d+$/;

export function integer(min: number, max: number, what: string) {
  return z
    .union([z.number(), z.string().regex(decimal, { message: `expected ${what}` }).transform(Number)])
    .pipe(
      z
        .number()
        .int({ message: `expected ${what}` })
        .min(min, { message: `expected ${what}` })
        .max(max, { message: `expected ${what}` }),
    );
}

export const port = () => integer(1, 65535, 'a TCP/UDP port, an integer from 1 to 65535');

export const flag = () =>
  z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], {
    message: 'expected true or false',
  });

export function isCidr(value: string): boolean {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(value);
  return m !== null && isIPv4(m[1]) && Number(m[2]) <= 32;
}

export const cidr = () =>
  z.string().refine(isCidr, { message: 'expected an IPv4 CIDR such as 203.0.113.0/24' });

export const ipv4 = () => z.string().refine((v) => isIPv4(v), { message: 'expected an IPv4 address such as 203.0.113.10' });

export const cidrList = () => z.array(cidr(), { message: 'expected a list of IPv4 CIDRs' });
