/**
 * One word for a POSIX shell. A word of only safe characters stays as it is, so logged commands stay readable;
 * anything else (the empty word too) is single-quoted, each `'` written as `'\''`.
 */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
