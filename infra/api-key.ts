import * as pulumi from '@pulumi/pulumi';
import * as random from '@pulumi/random';

/** Prefix of the keys the kit generates: the form E2B users know. */
export const API_KEY_PREFIX = 'e2b_';
export const API_KEY_RANDOM_LENGTH = 40;

/** The platform API key: generated once, kept (encrypted) in the stack state, only ever a Pulumi secret. */
export function platformApiKey(name: string, opts?: pulumi.CustomResourceOptions): pulumi.Output<string> {
  const generated = new random.RandomPassword(name, { length: API_KEY_RANDOM_LENGTH, special: false, upper: false }, opts);
  return pulumi.secret(pulumi.interpolate`${API_KEY_PREFIX}${generated.result}`);
}
