/**
 * The buckets a ramp of N creates one after another (each kept running) is reported in, by create number: 20 each
 * (a third of N when N is under 60), the first, the one ending at N - 100 (81-100 of 200; around the middle when N is
 * under 120) and the last. `from` and `to` index the creates (0-based, `to` excluded). Used by density.ts and
 * sandbox-start.ts (--ramp).
 */
export interface Bucket {
  label: string;
  from: number;
  to: number;
}

export function rampBuckets(n: number): Bucket[] {
  if (!Number.isInteger(n) || n < 3) throw new Error(`a ramp of ${n} creates: expected a whole number of at least 3`);
  const size = Math.min(20, Math.floor(n / 3));
  const midEnd = n >= 120 ? n - 100 : Math.ceil(n / 2 + size / 2);
  return [
    { label: `1-${size}`, from: 0, to: size },
    { label: `${midEnd - size + 1}-${midEnd}`, from: midEnd - size, to: midEnd },
    { label: `${n - size + 1}-${n}`, from: n - size, to: n },
  ];
}
