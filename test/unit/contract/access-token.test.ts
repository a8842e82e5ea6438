import { createHash } from 'node:crypto';
import {
  AccessTokenChecker,
  accessTokenMatches,
  accessTokenProblem,
  checkAccessToken,
  checkHeldAccessToken,
  hashAccessToken,
} from '../../../src/contract/access-token';
import { toCatalogEntry } from '../../../src/catalog/entry';

/** What Node hands over for a header whose bytes are the UTF-8 of `text`: each byte as one latin-1 character. */
const asHeader = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('access token', () => {
  it('stores the sha256 hex of the token bytes', () => {
    expect(hashAccessToken('tok-1')).toBe(createHash('sha256').update('tok-1').digest('hex'));
  });

  it('matches only the token whose hash is stored', () => {
    const stored = hashAccessToken('right');
    expect(accessTokenMatches('right', stored)).toBe(true);
    expect(accessTokenMatches('wrong', stored)).toBe(false);
    expect(accessTokenMatches('right ', stored)).toBe(false);
  });

  it('never matches a missing, empty or repeated token, nor the hash itself', () => {
    const stored = hashAccessToken('right');
    expect(accessTokenMatches(undefined, stored)).toBe(false);
    expect(accessTokenMatches('', stored)).toBe(false);
    expect(accessTokenMatches(['right', 'right'], stored)).toBe(false);
    expect(accessTokenMatches(stored, stored)).toBe(false);
  });

  it.each(['tökén', 'a b', 'tab\there', '€uro', '', 'x'.repeat(1025), 'nul\0'])(
    'refuses to create the token %j, naming the rule',
    (token) => {
      expect(() => hashAccessToken(token)).toThrow(/invalid access token .*visible ASCII/);
      expect(accessTokenProblem(token)).toContain('visible ASCII');
    },
  );

  it('accepts what the platform generates (hex, base64url) and every visible ASCII character', () => {
    for (const token of ['0123456789abcdef'.repeat(3), 'AZaz09-_', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', 'x'.repeat(1024)]) {
      expect(accessTokenProblem(token)).toBeUndefined();
      expect(checkAccessToken(token, hashAccessToken(token))).toBe('ok');
    }
  });

  it('says what is wrong with a presented token: missing, malformed (non-ASCII or repeated) or mismatch', () => {
    const stored = hashAccessToken('right');
    expect(checkAccessToken(undefined, stored)).toBe('missing');
    expect(checkAccessToken('', stored)).toBe('missing');
    expect(checkAccessToken(asHeader('rïght'), stored)).toBe('malformed');
    expect(checkAccessToken(['right', 'right'], stored)).toBe('malformed');
    expect(checkAccessToken('wrong', stored)).toBe('mismatch');
  });

  it('is validated where catalog entries are created, naming the field', () => {
    expect(() => toCatalogEntry({ sandboxID: 'sb1', host: '10.0.0.1', token: 'tökén' })).toThrow(/token: expected 1 to 1024 visible ASCII/);
    expect(toCatalogEntry({ sandboxID: 'sb1', host: '10.0.0.1', token: 'fine-token' }).tokenHash).toBe(hashAccessToken('fine-token'));
  });
});

describe('checkHeldAccessToken (the agent, which holds the token)', () => {
  const token = 'sbx1.0123456789abcdef0123456789abcdef';

  it("gives the digest check's verdict for every kind of presented token", () => {
    const near = [
      token,
      `${token}0`,
      token.slice(0, -1),
      `${token.slice(0, -1)}0`,
      `0${token.slice(1)}`,
      token + token,
      token.slice(0, 1),
      'x'.repeat(token.length),
      // Shorter tokens that repeat to the held one's characters: the compare wraps the presented one, never matches.
      token.slice(0, token.length / 2),
      ' ',
      '',
      undefined,
      [token, token],
      asHeader(`${token}é`),
    ];
    for (const presented of near) expect(checkHeldAccessToken(presented, token)).toBe(checkAccessToken(presented, hashAccessToken(token)));
    expect(checkHeldAccessToken(token, token)).toBe('ok');
    expect(checkHeldAccessToken('aa', 'a')).toBe('mismatch');
    expect(checkHeldAccessToken('a', 'aa')).toBe('mismatch');
  });

  it('agrees with the digest check on random tokens of every length and alphabet', () => {
    const visible = Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const make = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');
    let matches = 0;
    for (let i = 0; i < 3000; i++) {
      const alphabet = visible.slice(0, 1 + random(4) * 30);
      const held = make(alphabet, 1 + random(6));
      const presented = random(3) === 0 ? held : make(alphabet, 1 + random(6));
      const verdict = checkHeldAccessToken(presented, held);
      expect(verdict).toBe(checkAccessToken(presented, hashAccessToken(held)));
      if (verdict === 'ok') matches++;
    }
    expect(matches).toBeGreaterThan(900);
    expect(matches).toBeLessThan(2000);
  });
});

describe('AccessTokenChecker (the gateway path)', () => {
  it('accepts the right token every time, also once remembered', () => {
    const checker = new AccessTokenChecker();
    const stored = hashAccessToken('sandbox-token');
    for (let i = 0; i < 3; i++) expect(checker.check('sandbox-token', stored)).toBe('ok');
  });

  it('refuses a remembered token for another sandbox, or after its sandbox got a new token', () => {
    const checker = new AccessTokenChecker();
    const first = hashAccessToken('token-a');
    expect(checker.check('token-a', first)).toBe('ok');
    expect(checker.check('token-a', hashAccessToken('token-b'))).toBe('mismatch');
    expect(checker.matches('token-b', hashAccessToken('token-b'))).toBe(true);
    expect(checker.check('token-a', first)).toBe('ok');
  });

  it('refuses non-ASCII header bytes with a verdict, not an exception', () => {
    const checker = new AccessTokenChecker();
    const stored = hashAccessToken('right');
    expect(checker.check(asHeader('tökén'), stored)).toBe('malformed');
    expect(checker.check('\xff\xfe', stored)).toBe('malformed');
    expect(checker.check(undefined, stored)).toBe('missing');
    expect(checker.check(['right'], stored)).toBe('malformed');
  });

  it('remembers only accepted tokens, within its capacity, and stays correct past it', () => {
    const checker = new AccessTokenChecker(2);
    const tokens = ['t1', 't2', 't3', 't4'];
    for (const t of tokens) expect(checker.check(t, hashAccessToken(t))).toBe('ok');
    for (const t of tokens) expect(checker.check(t, hashAccessToken(t))).toBe('ok');
    for (let i = 0; i < 10; i++) expect(checker.check(`guess-${i}`, hashAccessToken('t1'))).toBe('mismatch');
    expect(checker.check('t1', hashAccessToken('t2'))).toBe('mismatch');
  });
});
