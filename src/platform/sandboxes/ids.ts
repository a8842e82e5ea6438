/** The identifiers and secrets a sandbox gets when it is made (docs/platform.md, Identifiers and secrets). */
import { tokenForSandbox } from '../../contract/access-token';
import { LOWER_ALNUM, randomText, TOKEN_ALPHABET } from '../../util/random-text';

export const SANDBOX_ID_LENGTH = 20;
/** 40 characters of 62 give about 238 bits. */
export const ACCESS_TOKEN_LENGTH = 40;

export function newSandboxID(): string {
  return randomText(LOWER_ALNUM, SANDBOX_ID_LENGTH);
}

export function newAccessToken(): string {
  return randomText(TOKEN_ALPHABET, ACCESS_TOKEN_LENGTH);
}

/** A sandbox's envdAccessToken: `<sandboxID>.<secret>`, so it names its sandbox (tokenForSandbox says why). */
export function newEnvdAccessToken(sandboxID: string): string {
  return tokenForSandbox(sandboxID, newAccessToken());
}
