/** One shell word: safe characters stay as they are, anything else is single-quoted. */
export function shellQuote(s: string): string {
  if (s === '') return "''";
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}
