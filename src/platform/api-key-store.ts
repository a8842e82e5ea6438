import type Redis from 'ioredis';
import { ApiKeys, hashApiKey } from './api-keys';
import { DEFAULT_STORE_PREFIX } from './sandboxes/store';

/**
 * The accepted API keys' hashes, kept in Redis beside the sandboxes. The key file is their source: each start
 * replaces the stored set with the file's keys, so a key deleted from the file stops working at the next start.
 * Checks run against an in-memory copy (no Redis round trip per request for a set that changes only at start).
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

  /** Makes these plain keys (stored as hashes, never as keys) the accepted set, in one transaction. */
  async replace(plainKeys: readonly string[]): Promise<void> {
    if (plainKeys.length === 0) throw new Error('at least one API key is needed');
    await this.redis
      .multi()
      .del(this.key)
      .sadd(this.key, ...plainKeys.map(hashApiKey))
      .exec();
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
