/**
 * Names of everything a lab creates. Every namespace starts with `sk-<lab>-`, so a lab's leftovers can be found by
 * prefix without touching another lab's (tests run several labs side by side, each with its own name).
 */
export const LAB_PREFIX = 'sk-';
export const DEFAULT_LAB_NAME = 'lab';

/** Short enough that the root-namespace veth `sk-<name>-h` fits the kernel's 15-character interface names. */
export const LAB_NAME = /^[a-z][a-z0-9]{0,7}$/;

export function checkLabName(name: string): string {
  if (!LAB_NAME.test(name)) {
    throw new Error(`invalid lab name ${JSON.stringify(name)}: expected 1 to 8 lower-case letters or digits, starting with a letter`);
  }
  return name;
}

/** The fixed nodes of a lab; sandboxes are `sb1`, `sb2`, ... */
export const FIXED_NODES = ['inet', 'web', 'proxy', 'sbhost'] as const;
export type FixedNode = (typeof FIXED_NODES)[number];

export function sandboxNode(index: number): string {
  return `sb${index}`;
}

export function namespacePrefix(lab: string): string {
  return `${LAB_PREFIX}${lab}-`;
}

export function namespaceName(lab: string, node: string): string {
  return `${namespacePrefix(lab)}${node}`;
}

/** The only interface a lab may put into the root namespace (optional host link). */
export function hostLinkName(lab: string): string {
  return `${LAB_PREFIX}${lab}-h`;
}

/** Where labs keep their state: one directory per lab, root-only. */
export const LABS_DIR = '/run/sandbox-kit/labs';

export function labDir(lab: string, base = LABS_DIR): string {
  return `${base}/${lab}`;
}
