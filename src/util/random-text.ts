import { randomBytes } from 'node:crypto';

/** Lower-case letters and digits: the alphabet of the IDs the kit makes (a host name lower-cases what it carries). */
export const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
/**
 * Letters and digits, both cases: the alphabet of access tokens. ASCII only, so a header carries it byte for byte and
 * the agent and the gateway hash exactly what the platform hashed.
 */
export const TOKEN_ALPHABET = `${LOWER_ALNUM}ABCDEFGHIJKLMNOPQRSTUVWXYZ`;

/** `length` characters drawn uniformly from `alphabet` (rejection sampling, so no character is more likely). */
export function randomText(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}
