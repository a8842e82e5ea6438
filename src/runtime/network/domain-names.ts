/**
 * Domain names in egress rules (`allowOut: ["example.com", "*.example.com"]`), as E2B defines them: compared
 * lower-case; an exact name matches itself only; `*.example.com` matches every name below example.com at any depth
 * but not example.com itself; a bare `*` is no rule. Pure.
 */

/** What a domain rule accepts, said once: the error of a bad one and the docs. */
export const DOMAIN_RULE = 'a domain name such as example.com or *.example.com (letters, digits, "-", at least two labels)';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The rule lower-cased, or undefined when it is not a domain rule (an IP or CIDR, a bare "*", a malformed name). */
export function canonicalDomainRule(text: string): string | undefined {
  const t = text.trim().toLowerCase().replace(/\.$/, '');
  const name = t.startsWith('*.') ? t.slice(2) : t;
  if (name.length === 0 || name.length > 253) return undefined;
  const labels = name.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined;
  // All-numeric last label: an address (or a malformed one), never a name.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return undefined;
  return t;
}

/** Whether `name` (an SNI or Host name) matches one of the canonical rules. */
export function matchesDomain(rules: readonly string[], name: string): boolean {
  const n = name.trim().toLowerCase().replace(/\.$/, '');
  if (n.length === 0) return false;
  return rules.some((r) => (r.startsWith('*.') ? n.endsWith(r.slice(1)) && n.length > r.length - 1 : n === r));
}
