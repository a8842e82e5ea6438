import { randomBytes } from 'node:crypto';

/** Lower-case letters and digits: what a sandbox ID may hold (the host form `{port}-{id}.{domain}` needs it). */
export const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
/**
 * Letters and digits, both cases: the alphabet of access tokens. ASCII only, so a header carries it byte for byte and the agent and the gateway hash exactly what the platform hashed.
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

export const SANDBOX_ID_LENGTH = 20;
/** 40 characters of 62 give about 238 bits. */
export const ACCESS_TOKEN_LENGTH = 40;

export function newSandboxID(): string {
  return randomText(LOWER_ALNUM, SANDBOX_ID_LENGTH);
}

export function newAccessToken(): string {
  return randomText(TOKEN_ALPHABET, ACCESS_TOKEN_LENGTH);
}
