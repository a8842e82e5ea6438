/**
 * Secret values at rest: AES-256-GCM with the platform's secrets key, a random 96-bit nonce per value, and the
 * secret's ID and version as associated data, so a sealed value copied onto another secret or version does not open.
 * The key is 32 random bytes in a file of its own (0600, made on first start); a key file readable by anyone but its
 * owner is refused rather than used. A fleet's hosts share the Redis and must share this file too.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The key of `file`, made (0600, never overwritten) when the file is missing. */
export function loadOrCreateSecretsKey(file: string): Buffer {
  try {
    const made = randomBytes(KEY_BYTES);
    fs.writeFileSync(file, `${made.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0)
    throw new Error(`the secrets key file ${file} has mode ${mode.toString(8)}: it must be readable by its owner only (chmod 600)`);
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`the secrets key file ${file} does not hold ${KEY_BYTES} bytes in base64`);
  return key;
}

export class SecretSealer {
  constructor(private readonly key: Buffer) {}

  /** base64 of nonce, tag and ciphertext. */
  seal(value: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64');
  }

  /** The value, or an error (that never holds it) when the sealed text was changed, moved or sealed with another key. */
  open(sealed: string, context: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`a stored secret value (${context}) does not open with this platform's secrets key`);
    }
  }
}
