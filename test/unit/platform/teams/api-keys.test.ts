import { E2B_SDK_KEY_FORM } from '../../../../src/contract/api-key';
import { ApiKeys, hashApiKey, keysOlderSdksRefuse, newApiKey, parseApiKeyFile } from '../../../../src/platform/teams/api-keys';

describe('ApiKeys', () => {
  it('accepts exactly the keys whose hashes it holds', () => {
    const keys = new ApiKeys([hashApiKey('first-key-1'), hashApiKey('second-key-2')]);
    expect(keys.matches('first-key-1')).toBe(true);
    expect(keys.matches('second-key-2')).toBe(true);
    expect(keys.matches('first-key-2')).toBe(false);
    expect(keys.matches('')).toBe(false);
    expect(keys.matches(undefined)).toBe(false);
    // Keys no platform issues (a space, non-ASCII bytes as Node presents them) match nothing instead of throwing.
    expect(keys.matches('first-key-1 ')).toBe(false);
    expect(keys.matches('first-k\u00e9y-1')).toBe(false);
    expect(keys.matches(['first-key-1'])).toBe(false);
  });

  it('refuses a stored hash that is not sha256 hex', () => {
    expect(() => new ApiKeys(['abc'])).toThrow('64 lowercase hex digits');
  });

  it('makes distinct keys in the form E2B SDKs check client-side', () => {
    const a = newApiKey();
    expect(a).toMatch(/^e2b_[0-9a-f]{40}$/);
    expect(a).toMatch(E2B_SDK_KEY_FORM);
    expect(newApiKey()).not.toBe(a);
  });
});

describe('parseApiKeyFile', () => {
  it('reads one key per line, skipping blanks and comments', () => {
    expect(parseApiKeyFile('# local\nsk_abcdefgh\n\n  other-key-123  \n', 'f')).toEqual(['sk_abcdefgh', 'other-key-123']);
  });

  it('names every bad line and the file', () => {
    expect(() => parseApiKeyFile('short\nok-key-12345\nhas space in\n', '/k')).toThrow(
      'API key file /k: line 1: expected 8-256 printable ASCII characters without spaces (got 5 characters); line 3:',
    );
  });

  it('refuses a file without keys', () => {
    expect(() => parseApiKeyFile('# nothing\n', '/k')).toThrow('holds no key');
  });
});

describe('keysOlderSdksRefuse', () => {
  it('counts the keys not of the form e2b_<lower-case hex>', () => {
    expect(keysOlderSdksRefuse([newApiKey(), 'e2b_0123abcdef'])).toBe(0);
    expect(keysOlderSdksRefuse(['sk_AbC123456789', 'e2b_ABCDEF0123', 'e2b_xyz00000000', newApiKey()])).toBe(3);
  });
});
