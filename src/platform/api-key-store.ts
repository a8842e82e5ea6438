import type Redis from 'ioredis';
import { ApiKeys, hashApiKey } from './api-keys';
import { DEFAULT_STORE_PREFIX } from './sandbox-store';

/**
 * The accepted API keys' hashes, kept in Redis beside the sandboxes so every platform of a fleet accepts the same
 * keys. Checks run against an in-memory copy (a Redis round trip per request is not needed for a set that changes
 * only when keys are added).
 */
export class ApiKeyStore {
  private keys = new ApiKeys([]);
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_STORE_PREFIX,
  ) {
    this.key = `${prefix}api-key-hashes`;
  }

  /** Stores the hashes of these plain keys (never the keys) and reloads the accepted set. */
  async add(plainKeys: readonly string[]): Promise<void> {
    if (plainKeys.length > 0) await this.redis.sadd(this.key, ...plainKeys.map(hashApiKey));
    await this.reload();
  }

  async reload(): Promise<void> {
    this.keys = new ApiKeys(await this.redis.smembers(this.key));
  }

  get size(): number {
    return this.keys.size;
  }

  matches(presented: string | string[] | undefined): boolean {
    return this.keys.matches(presented);
  }
}
