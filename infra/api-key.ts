import { createHash } from 'node:crypto';
import * as pulumi from '@pulumi/pulumi';
import * as random from '@pulumi/random';
import { API_KEY_PREFIX } from '../src/contract/api-key';

export const API_KEY_RANDOM_LENGTH = 40;

export interface PlatformApiKey {
  /** The key handed out: `e2b_` and 40 lower-case hex digits, the form E2B's SDKs check client-side. */
  key: pulumi.Output<string>;
  /** Keys earlier releases handed out from the same secret (`e2b_` and letters): still accepted, never exported. */
  former: pulumi.Output<string[]>;
}

/**
 * The hex key derived from the stack's random secret. Derived rather than drawn anew, so a stack made by an earlier
 * release keeps its secret (no replacement) and the key it handed out then keeps working beside the new one.
 */
export function hexApiKey(secret: string): string {
  return API_KEY_PREFIX + createHash('sha256').update(secret).digest('hex').slice(0, API_KEY_RANDOM_LENGTH);
}

/** The platform API key: generated once, kept (encrypted) in the stack state, only ever a Pulumi secret. */
export function platformApiKey(name: string, opts?: pulumi.CustomResourceOptions): PlatformApiKey {
  const generated = new random.RandomPassword(name, { length: API_KEY_RANDOM_LENGTH, special: false, upper: false }, opts);
  return {
    key: pulumi.secret(generated.result.apply(hexApiKey)),
    former: pulumi.secret(generated.result.apply((secret) => [`${API_KEY_PREFIX}${secret}`])),
  };
}
