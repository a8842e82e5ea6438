/**
 * The template ID from what `sandbox-kit template build` printed (its last `templateID` mention), else the alias:
 * sandboxes can be created from either.
 */
export function templateIdFrom(buildOutput: string, alias: string): string {
  const ids = [...buildOutput.matchAll(/template ?id["':=\s]+([a-z0-9][a-z0-9_-]*)/gi)].map((m) => m[1]!);
  return ids.at(-1) ?? alias;
}
