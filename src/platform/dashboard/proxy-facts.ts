/**
 * What the dashboard shows of the proxy: its stable ingress address, the egress address sandboxes leave by, and when
 * that last changed. Whoever deploys the proxy writes them to a small JSON file (the local system's `up` and
 * `rotate` do); the platform reads it on every look, so a rotation shows without a restart.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

const factsSchema = z.object({
  ingress: z.string(),
  egress: z.string(),
  /** ISO time of the last rotation; null before the first. */
  rotatedAt: z.string().nullable(),
});
export type ProxyFacts = z.infer<typeof factsSchema>;

export function writeProxyFacts(file: string, facts: ProxyFacts): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify(facts, null, 2)}\n`, { mode: 0o644 });
  renameSync(`${file}.tmp`, file);
}

/** The facts, or why there are none (no file yet, or one that does not hold them). */
export function readProxyFacts(file: string): ProxyFacts | { problem: string } {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    return { problem: `no proxy facts yet (${file} does not exist)` };
  }
  try {
    const parsed = factsSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : { problem: `${file} does not hold {ingress, egress, rotatedAt}` };
  } catch {
    return { problem: `${file} is not JSON` };
  }
}
