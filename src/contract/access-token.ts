import { createHash, timingSafeEqual } from 'node:crypto';

/** The catalog keeps only this digest of a sandbox's access token, so a leaked catalog opens nothing. */
export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Compares a presented token against the stored digest in constant time; a missing token never matches. */
export function accessTokenMatches(presented: string | string[] | undefined, tokenHash: string): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  const actual = tokenDigest(presented);
  const expected = Buffer.from(tokenHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * accessTokenMatches with the sha256 of recently accepted tokens remembered, so a client that sends the
 * same token on every request is hashed once rather than per request. Only tokens that matched some
 * sandbox are remembered (a stream of wrong guesses cannot fill the cache), and the comparison against
 * the stored digest still runs every time, in constant time: a remembered token that no longer matches
 * (the catalog entry changed) is refused exactly as before. Both caches are bounded.
 */
export class AccessTokenChecker {
  /** presented token -> its sha256, for tokens that matched; the oldest is dropped first when full. */
  private readonly accepted = new Map<string, Buffer>();
  /** stored hex digest -> bytes, so the catalog's hex is decoded once. */
  private readonly expected = new Map<string, Buffer>();

  constructor(private readonly capacity = 1024) {}

  matches(presented: string | string[] | undefined, tokenHash: string): boolean {
    if (typeof presented !== 'string' || presented === '') return false;
    let expected = this.expected.get(tokenHash);
    if (expected === undefined) {
      expected = Buffer.from(tokenHash, 'hex');
      remember(this.expected, tokenHash, expected, this.capacity);
    }
    const known = this.accepted.get(presented);
    const actual = known ?? tokenDigest(presented);
    const ok = actual.length === expected.length && timingSafeEqual(actual, expected);
    if (ok && known === undefined) remember(this.accepted, presented, actual, this.capacity);
    return ok;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, capacity: number): void {
  if (map.size >= capacity) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/**
 * What an access token may contain: printable ASCII without spaces, 1 to 512 characters. HTTP header values reach a
 * server as bytes (Node reads them as latin1), so a token outside ASCII would never compare equal to what was set;
 * the agent's /init and the platform refuse such tokens where they are created.
 */
export const ACCESS_TOKEN_PATTERN = /^[\x21-\x7e]{1,512}$/;
