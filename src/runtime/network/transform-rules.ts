/**
 * Per-domain request transforms (the E2B SDK's `network.rules`): which rule set a host gets, and a request head's
 * headers rewritten by it, secret placeholders resolved. Pure.
 *
 * Keys are exact names or one leading `*.` (subdomains at any depth, not the apex; a bare `*` is no key), lower-cased.
 * A host gets the rule set of its exact key, else of the longest wildcard that matches it; sets are never merged.
 * Within a set the rules apply in order, a later one overriding an earlier one's header.
 */
import { canonicalDomainRule } from './domain-names';

export interface TransformRule {
  transform?: { headers?: Record<string, string> };
}

export type TransformRules = Record<string, TransformRule[]>;

/** `${e2b.secrets.NAME}`: what the SDK's Secret.fill(NAME) writes; resolved on the host when a request leaves. */
export const SECRET_PLACEHOLDER = /\$\{e2b\.secrets\.([^{}]*)\}/g;

/** Headers a transform may not set: they frame the request or the connection, which the relay keeps to itself. */
export const FRAMING_HEADERS = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
] as const;

/** A rule key as stored, or undefined when it is not one (an address, a bare `*`, a malformed name). */
export function canonicalRuleKey(key: string): string | undefined {
  return canonicalDomainRule(key);
}

/** The rule set for `host` (an SNI name): its exact key's, else the longest matching wildcard's; undefined when none. */
export function rulesFor(rules: TransformRules | undefined, host: string): TransformRule[] | undefined {
  if (!rules) return undefined;
  const name = host.trim().toLowerCase().replace(/\.$/, '');
  if (name === '') return undefined;
  if (Object.hasOwn(rules, name)) return rules[name];
  let best: string | undefined;
  for (const key of Object.keys(rules)) {
    if (!key.startsWith('*.')) continue;
    const suffix = key.slice(1);
    if (name.endsWith(suffix) && name.length > suffix.length && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : rules[best];
}

/** The headers a rule set sets, lower-cased name -> [name as written, value with its placeholders]. */
export function headersOf(set: readonly TransformRule[]): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const rule of set)
    for (const [name, value] of Object.entries(rule.transform?.headers ?? {})) out.set(name.toLowerCase(), [name, value]);
  return out;
}

/** The secret names a text's placeholders refer to, in order, each once. */
export function placeholderNames(text: string): string[] {
  return [...new Set([...text.matchAll(SECRET_PLACEHOLDER)].map((m) => m[1] as string))];
}

/**
 * A request head (latin1, without its blank line) with the set's headers set: an existing field of the same name is
 * removed and the rule's added at the end, its placeholders replaced by `values` (name -> value). A placeholder with
 * no value, or a result with a control character, is an error: the request is never sent with it.
 */
export function rewriteHead(head: string, headers: Map<string, [string, string]>, values: ReadonlyMap<string, string>): string {
  const [requestLine = '', ...lines] = head.split('\r\n');
  const kept = lines.filter((line) => !headers.has(line.slice(0, line.indexOf(':')).trim().toLowerCase()));
  const added = [...headers.values()].map(([name, template]) => {
    const value = template.replace(SECRET_PLACEHOLDER, (_, secret: string) => {
      const v = values.get(secret);
      if (v === undefined) throw new Error(`the secret ${JSON.stringify(secret)} of header ${name} is not known`);
      return v;
    });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) throw new Error(`header ${name} would hold a control character`);
    return `${name}: ${Buffer.from(value, 'utf8').toString('latin1')}`;
  });
  return [requestLine, ...kept, ...added].join('\r\n');
}
