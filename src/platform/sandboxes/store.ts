import type Redis from 'ioredis';
import type { SandboxRecord } from './record';

/** Keys of the platform's own data in Redis; the catalog, when it shares the Redis, uses `sandbox-kit:sandbox:*`. */
export const DEFAULT_STORE_PREFIX = 'sandbox-kit:platform:';

/**
 * Sandboxes in Redis: one hash, sandboxID -> JSON record. One HSET per change is atomic, and with the private
 * Redis's `appendfsync always` it is on disk before the call resolves.
 */
export class SandboxStore {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_STORE_PREFIX,
  ) {
    this.key = `${prefix}sandboxes`;
  }

  async put(record: SandboxRecord): Promise<void> {
    await this.redis.hset(this.key, record.sandboxID, JSON.stringify(record));
  }

  async get(sandboxID: string): Promise<SandboxRecord | undefined> {
    const text = await this.redis.hget(this.key, sandboxID);
    return text === null ? undefined : (JSON.parse(text) as SandboxRecord);
  }

  async delete(sandboxID: string): Promise<void> {
    await this.redis.hdel(this.key, sandboxID);
  }

  async all(): Promise<SandboxRecord[]> {
    const fields = await this.redis.hgetall(this.key);
    return Object.values(fields).map((text) => JSON.parse(text) as SandboxRecord);
  }
}
