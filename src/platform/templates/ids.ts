import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Template IDs are lower-case letters and digits, like sandbox IDs (host-style routing cannot carry anything else). */
export function newTemplateID(): string {
  const bytes = randomBytes(20);
  let id = '';
  for (const b of bytes) id += ALPHABET[b % ALPHABET.length];
  return id;
}

/** Build IDs are UUIDs, as E2B's are. */
export function newBuildID(): string {
  return randomUUID();
}
