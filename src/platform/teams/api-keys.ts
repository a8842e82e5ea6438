import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { hashAccessToken } from '../../contract/access-token';
import { API_KEY_PREFIX, E2B_SDK_KEY_FORM } from '../../contract/api-key';
import { operatorCaller } from './model';
import type { KeyVerdict } from '../http/types';

/** Keys the platform makes have E2B's form (src/contract/api-key.ts) with 40 hex digits: 160 random bits. */
const API_KEY_RANDOM_BYTES = 20;
/** What a key given to the platform may look like: printable ASCII without spaces, 8 to 256 characters. */
export const API_KEY_PATTERN = /^[\x21-\x7e]{8,256}$/;

export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(API_KEY_RANDOM_BYTES).toString('hex');
}

/** How many of these keys E2B's SDKs 2.27 to 2.45 refuse client-side (said at start, so nobody hunts a 401). */
export function keysOlderSdksRefuse(keys: readonly string[]): number {
  return keys.filter((k) => !E2B_SDK_KEY_FORM.test(k)).length;
}

/** The stored form of a key: sha256 hex, as for access tokens, so a leaked store opens nothing. */
export const hashApiKey = hashAccessToken;

/** A fixed set of the operator's keys, held only as their sha256: each is an admin key of the default team. */
export class ApiKeys {
  private readonly digests: Buffer[];

  constructor(hashes: Iterable<string>) {
    this.digests = [...new Set(hashes)].map((h) => {
      if (!/^[0-9a-f]{64}$/.test(h)) throw new Error('an API key hash must be 64 lowercase hex digits (sha256)');
      return Buffer.from(h, 'hex');
    });
  }

  static fromKeys(keys: Iterable<string>): ApiKeys {
    return new ApiKeys([...keys].map(hashApiKey));
  }

  get size(): number {
    return this.digests.length;
  }

  /** Constant time per stored key, and every stored key is compared, so timing tells nothing about which matched. */
  matches(presented: string | string[] | undefined): boolean {
    // A key no platform could have issued (spaces, non-ASCII bytes) matches nothing; hashing would refuse it.
    if (typeof presented !== 'string' || !API_KEY_PATTERN.test(presented)) return false;
    const digest = Buffer.from(hashApiKey(presented), 'hex');
    let found = false;
    for (const stored of this.digests) found = timingSafeEqual(digest, stored) || found;
    return found;
  }

  check(presented: string): KeyVerdict {
    if (!this.matches(presented)) return { ok: false, status: 401, message: 'the X-API-Key header holds no valid API key' };
    return { ok: true, caller: operatorCaller(presented) };
  }
}

/** Keys in a key file: one per line; blank lines and `#` comments are ignored. */
export function parseApiKeyFile(text: string, path: string): string[] {
  const keys: string[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (!API_KEY_PATTERN.test(line)) {
      problems.push(`line ${i + 1}: expected 8-256 printable ASCII characters without spaces (got ${line.length} characters)`);
    } else keys.push(line);
  });
  if (problems.length > 0) throw new Error(`API key file ${path}: ${problems.join('; ')}`);
  if (keys.length === 0) throw new Error(`API key file ${path}: holds no key (one key per line)`);
  return keys;
}

export interface KeyFileResult {
  keys: string[];
  /** True when the file did not exist and a new key was written to it. */
  generated: boolean;
}

/**
 * Reads the keys in `path`; when the file does not exist, makes one key and writes it there with mode 0600
 * (created exclusively, so two platforms starting at once never overwrite each other's key).
 */
export async function loadOrCreateApiKeyFile(path: string): Promise<KeyFileResult> {
  try {
    return { keys: parseApiKeyFile(await readFile(path, 'utf8'), path), generated: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const key = newApiKey();
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateApiKeyFile(path);
    throw err;
  }
  try {
    await handle.writeFile(`${key}\n`);
    await chmod(path, 0o600);
  } finally {
    await handle.close();
  }
  return { keys: [key], generated: true };
}
