import { createHash, timingSafeEqual } from 'node:crypto';

/** The catalog keeps only this digest of a sandbox's access token, so a leaked catalog opens nothing. */
export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares a presented token against the stored digest in constant time; a missing token never matches. */
export function accessTokenMatches(presented: string | string[] | undefined, tokenHash: string): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  const actual = Buffer.from(hashAccessToken(presented), 'hex');
  const expected = Buffer.from(tokenHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
