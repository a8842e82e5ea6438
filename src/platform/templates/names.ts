/** `name:tag` as the SDK sends it in `name`: the part before the colon is the alias, the rest a tag. */
export function splitNameTag(nameWithTag: string): { name: string; tag?: string } {
  const colon = nameWithTag.indexOf(':');
  return colon === -1 ? { name: nameWithTag } : { name: nameWithTag.slice(0, colon), tag: nameWithTag.slice(colon + 1) };
}
