/**
 * How every validation message shows what was given: the value the user wrote (not zod's transformed input), shortened,
 * and the nearest known name for a typo. One copy for stack config, CLI flags, API bodies and MCP configs.
 */

/** A given value as JSON, cut at `max` characters; `(missing)` when absent. */
export function showGiven(value: unknown, max = 80): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** What the user wrote at a path (zod's own `input` is the value after transforms, e.g. "8388" already a number). */
export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

export function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}
