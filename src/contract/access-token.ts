import { nodeCrypto } from '../util/node-crypto';

/**
 * What an access token may contain: 1 to 1024 visible ASCII characters (`!` to `~`: no spaces, no control
 * characters, nothing outside ASCII). The platform generates tokens (hex or base64url), so this costs nobody
 * anything, and it makes "the token" the same bytes everywhere: HTTP header values reach Node as latin-1, files
 * and JSON as UTF-8, and for ASCII the two agree. Leading or trailing spaces would be trimmed by every HTTP
 * parser on the way, so they could never match either.
 */
export const ACCESS_TOKEN_PATTERN = /^[\x21-\x7e]{1,1024}$/;

export const ACCESS_TOKEN_RULE = '1 to 1024 visible ASCII characters (no spaces, nothing outside ASCII)';

/**
 * Tokens the platform makes begin with their sandbox's ID and a dot, so a request that carries only its token (the
 * file transfers of SDK 2.10, every request of SDK 1.x in E2B_DEBUG mode) still names its sandbox. The ID is no
 * secret; the token is still checked whole against the sandbox's digest.
 */
export function tokenForSandbox(sandboxID: string, secret: string): string {
  return `${sandboxID}.${secret}`;
}

/** The sandbox a token names (see tokenForSandbox), or undefined for a token of another form. */
export function sandboxOfToken(token: string | string[] | undefined): string | undefined {
  if (typeof token !== 'string') return undefined;
  const dot = token.indexOf('.');
  return dot > 0 ? token.slice(0, dot) : undefined;
}

/** Why a token cannot be used, or undefined when it can; for the places tokens are created or configured. */
export function accessTokenProblem(token: string): string | undefined {
  if (ACCESS_TOKEN_PATTERN.test(token)) return undefined;
  const shown = token.length > 40 ? `${JSON.stringify(token.slice(0, 40))}... (${token.length} characters)` : JSON.stringify(token);
  return `invalid access token ${shown}: expected ${ACCESS_TOKEN_RULE}`;
}

function tokenDigest(token: string): Buffer {
  // latin1: one byte per character, exactly the bytes the client sent (tokens are ASCII, so this is also UTF-8).
  return nodeCrypto().createHash('sha256').update(token, 'latin1').digest();
}

/** The catalog keeps only this digest of a sandbox's access token, so a leaked catalog opens nothing. */
export function hashAccessToken(token: string): string {
  const problem = accessTokenProblem(token);
  if (problem !== undefined) throw new Error(problem);
  return tokenDigest(token).toString('hex');
}

/** What is wrong with a presented token, for the 401 message; `ok` when it matched. */
export type TokenVerdict = 'ok' | 'missing' | 'malformed' | 'mismatch';

function presentedProblem(presented: string | string[] | undefined): TokenVerdict | undefined {
  if (presented === undefined || presented === '') return 'missing';
  // Repeated headers arrive as an array (or joined): never one valid token.
  if (typeof presented !== 'string' || !ACCESS_TOKEN_PATTERN.test(presented)) return 'malformed';
  return undefined;
}

function sameDigest(actual: Buffer, expected: Buffer): boolean {
  return actual.length === expected.length && nodeCrypto().timingSafeEqual(actual, expected);
}

/**
 * Compares a presented token against the stored digest, in constant time over SHA-256 digests (neither the
 * token's content nor its length leaks through timing); a missing or malformed token never matches.
 */
export function checkAccessToken(presented: string | string[] | undefined, tokenHash: string): TokenVerdict {
  const problem = presentedProblem(presented);
  if (problem !== undefined) return problem;
  return sameDigest(tokenDigest(presented as string), Buffer.from(tokenHash, 'hex')) ? 'ok' : 'mismatch';
}

/**
 * Compares a presented token against the token itself, for a process that holds it anyway (the agent, which signs
 * /files URLs with it): every character of the held token is compared, whatever was presented and wherever it first
 * differs, so the time taken depends only on the held token's length, which the platform's format fixes. Same
 * verdicts as checkAccessToken, without hashing (so without node:crypto).
 */
export function checkHeldAccessToken(presented: string | string[] | undefined, token: string): TokenVerdict {
  const problem = presentedProblem(presented);
  if (problem !== undefined) return problem;
  const p = presented as string;
  let diff = p.length ^ token.length;
  for (let i = 0; i < token.length; i++) diff |= token.charCodeAt(i) ^ p.charCodeAt(i % p.length);
  return diff === 0 ? 'ok' : 'mismatch';
}

export function accessTokenMatches(presented: string | string[] | undefined, tokenHash: string): boolean {
  return checkAccessToken(presented, tokenHash) === 'ok';
}

/**
 * checkAccessToken with the sha256 of recently accepted tokens remembered, so a client that sends the
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

  check(presented: string | string[] | undefined, tokenHash: string): TokenVerdict {
    let expected = this.expected.get(tokenHash);
    if (expected === undefined) {
      expected = Buffer.from(tokenHash, 'hex');
      remember(this.expected, tokenHash, expected, this.capacity);
    }
    const known = typeof presented === 'string' ? this.accepted.get(presented) : undefined;
    if (known !== undefined) return sameDigest(known, expected) ? 'ok' : 'mismatch';
    const problem = presentedProblem(presented);
    if (problem !== undefined) return problem;
    const actual = tokenDigest(presented as string);
    if (!sameDigest(actual, expected)) return 'mismatch';
    remember(this.accepted, presented as string, actual, this.capacity);
    return 'ok';
  }

  matches(presented: string | string[] | undefined, tokenHash: string): boolean {
    return this.check(presented, tokenHash) === 'ok';
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, capacity: number): void {
  if (map.size >= capacity) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
