/** How far above the mean the most frequent character of `text` is, as a fraction of the mean (0 for a perfect spread). */
export function worstExcess(text: string, alphabet: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  const mean = text.length / alphabet.length;
  return Math.max(...[...alphabet].map((c) => counts.get(c) ?? 0)) / mean - 1;
}
