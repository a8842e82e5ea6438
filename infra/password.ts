import * as pulumi from '@pulumi/pulumi';
import * as random from '@pulumi/random';

/** Punctuation allowed in a generated password: printable, no quotes, backslash or space, so it reads safely anywhere. */
export const PASSWORD_SPECIALS = '!#%+,-.:=?@^_~';
export const PASSWORD_LENGTH = 32;

/**
 * The proxy password: the stack's secret when it sets one, else a generated one kept in the stack state.
 * Either way the value only travels as a Pulumi secret.
 */
export function proxyPassword(
  name: string,
  stackSecret: pulumi.Output<string> | undefined,
  opts?: pulumi.CustomResourceOptions,
): pulumi.Output<string> {
  if (stackSecret !== undefined) return pulumi.secret(stackSecret);
  const generated = new random.RandomPassword(
    name,
    { length: PASSWORD_LENGTH, special: true, overrideSpecial: PASSWORD_SPECIALS, minLower: 1, minUpper: 1, minNumeric: 1 },
    opts,
  );
  return pulumi.secret(generated.result);
}
