import { readFileSync } from 'node:fs';

/** A secret given as a file (a password, a token): its first line, trimmed; undefined when no file was given. */
export function readSecretFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const secret = readFileSync(path, 'utf8').split('\n')[0]?.trim() ?? '';
  if (secret === '') throw new Error(`${path} is empty: expected the secret on its first line`);
  return secret;
}
