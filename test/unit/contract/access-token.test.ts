import { createHash } from 'node:crypto';
import { accessTokenMatches, hashAccessToken } from '../../../src/contract/access-token';

describe('access token', () => {
  it('stores the sha256 hex of the token', () => {
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
});
