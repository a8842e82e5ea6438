import { toCatalogEntry, type CatalogEntry } from './entry';

/**
 * Parses the static catalog file: a JSON array of entries, or `{"sandboxes": [...]}`.
 * Every problem is reported with the entry's index, so one bad line in a large file is easy to find.
 */
export function parseCatalogFile(text: string, source = 'catalog file'): Map<string, CatalogEntry> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source}: not valid JSON (${(err as Error).message})`);
  }
  const list = Array.isArray(doc)
    ? doc
    : doc !== null && typeof doc === 'object' && Array.isArray((doc as { sandboxes?: unknown }).sandboxes)
      ? (doc as { sandboxes: unknown[] }).sandboxes
      : undefined;
  if (!list) {
    throw new Error(`${source}: expected a JSON array of {"sandboxID", "host", "token", "state"} objects or {"sandboxes": [...]}`);
  }
  const entries = new Map<string, CatalogEntry>();
  const problems: string[] = [];
  list.forEach((raw, index) => {
    try {
      const entry = toCatalogEntry(raw, `[${index}]`);
      if (entries.has(entry.sandboxID)) problems.push(`[${index}].sandboxID: ${JSON.stringify(entry.sandboxID)} appears more than once`);
      else entries.set(entry.sandboxID, entry);
    } catch (err) {
      problems.push((err as Error).message);
    }
  });
  if (problems.length > 0) throw new Error(`${source}: ${problems.join('; ')}`);
  return entries;
}
