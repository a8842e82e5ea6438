/**
 * A template reference as the SDK sends it: `name` or `name:tag` (a template ID may stand for the name). A reference
 * without a tag means the tag `default`, which every build without a tag of its own gets.
 */
export const DEFAULT_TAG = 'default';

/**
 * Names are matched exactly as given, case included: E2B accepts mixed-case names (the SDK itself only requires one),
 * and a template's ID, not its name, is what goes where a DNS-safe label is needed (ids.ts: lower-case letters and
 * digits), so a name needs no lower-casing.
 */
export const NAME_RULE = 'letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit)';
export const TAG_RULE = 'letters, digits, ".", "_" and "-" (1 to 64)';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const TAG = /^[A-Za-z0-9._-]{1,64}$/;
/** `name` or `name:tag`, for the schemas of request bodies. */
export const TEMPLATE_REF = new RegExp(`^${NAME.source.slice(1, -1)}(:${TAG.source.slice(1, -1)})?$`);

export type TemplateRef = { ok: true; name: string; tag?: string } | { ok: false; message: string };

/** `name:v2` -> name and tag; anything else malformed says what a reference looks like. */
export function parseTemplateRef(ref: string): TemplateRef {
  const parts = ref.split(':');
  if (parts.length > 2) return { ok: false, message: `${JSON.stringify(ref)} has more than one ":"; expected name or name:tag` };
  const [name = '', tag] = parts;
  if (!NAME.test(name)) return { ok: false, message: `${JSON.stringify(ref)}: the name must be ${NAME_RULE}` };
  if (tag !== undefined && !TAG.test(tag)) return { ok: false, message: `${JSON.stringify(ref)}: the tag must be ${TAG_RULE}` };
  return tag === undefined ? { ok: true, name } : { ok: true, name, tag };
}

export function isTag(tag: string): boolean {
  return TAG.test(tag);
}

/** Lenient split for names already validated at the edge. */
export function splitNameTag(nameWithTag: string): { name: string; tag?: string } {
  const colon = nameWithTag.indexOf(':');
  return colon === -1 ? { name: nameWithTag } : { name: nameWithTag.slice(0, colon), tag: nameWithTag.slice(colon + 1) };
}
