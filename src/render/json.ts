/** Config files are pretty-printed JSON with a final newline, so diffs and golden files stay readable. */
export function jsonFile(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
