import {
  ACCESS_TOKEN_LENGTH,
  newAccessToken,
  newEnvdAccessToken,
  newSandboxID,
  SANDBOX_ID_LENGTH,
} from '../../../../src/platform/sandboxes/ids';
import { SANDBOX_ID_PATTERN } from '../../../../src/contract/sandbox-id';

describe('sandbox identifiers', () => {
  it('sandbox IDs are 20 lower-case letters and digits, each new, each one the gateway accepts', () => {
    const ids = new Set(Array.from({ length: 200 }, newSandboxID));
    expect(ids.size).toBe(200);
    for (const id of ids) {
      expect(id).toMatch(new RegExp(`^[a-z0-9]{${SANDBOX_ID_LENGTH}}$`));
      expect(id).toMatch(SANDBOX_ID_PATTERN);
    }
  });

  it('access tokens are ASCII letters and digits', () => {
    expect(newAccessToken()).toMatch(new RegExp(`^[A-Za-z0-9]{${ACCESS_TOKEN_LENGTH}}$`));
    // A sandbox's token names it, so a request carrying only the token can be routed.
    expect(newEnvdAccessToken('abc123')).toMatch(new RegExp(`^abc123\\.[A-Za-z0-9]{${ACCESS_TOKEN_LENGTH}}$`));
  });
});
