import * as fs from 'node:fs';
import * as path from 'node:path';

/** Writes the token readable by root only (0600 in a 0700 dir), atomically: a reader never sees half a token. */
export function writeTokenFile(file: string, token: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, token, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

export function readTokenFile(file: string): string {
  const token = fs.readFileSync(file, 'utf8').trim();
  if (token === '') throw new Error(`token file ${file} is empty`);
  return token;
}
