import Redis from 'ioredis';
import { toCatalogEntry, type CatalogEntry, type CatalogEntryInput, type SandboxState } from './entry';
import { ChangeListeners } from './change-listeners';
import type { ChangeListener, WritableCatalog } from './types';

/** Default key prefix; every key and the channel start with it (documented in docs/gateway.md). */
export const DEFAULT_REDIS_PREFIX = 'sandbox-kit:';

export interface RedisCatalogOptions {
  prefix?: string;
  /** How long one Redis command may take before the lookup fails (the gateway then answers 503). */
  commandTimeoutMs?: number;
  onError?: (message: string) => void;
  /** The Redis AUTH password, when the URL holds none (read from a 0600 file, never from the command line). */
  password?: string;
}

/** Sets the state only when the entry exists, and announces it in the same step. */
const SET_STATE_IF_PRESENT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'state', ARGV[1])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0`;

/**
 * The catalog shared by a fleet of gateways: one Redis hash per sandbox, and a pub/sub channel on which
 * every write announces the sandboxID, so each gateway drops its cached copy at once.
 */
export class RedisCatalog implements WritableCatalog {
  private readonly listeners = new ChangeListeners();
  private readonly prefix: string;
  readonly channel: string;
  private closed = false;

  private constructor(
    private readonly client: Redis,
    private readonly subscriber: Redis,
    options: RedisCatalogOptions,
  ) {
    this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    this.channel = `${this.prefix}catalog-changes`;
  }

  /** Connects both the command and the subscriber connection; fails with a clear message if Redis is not there. */
  static async open(url: string, options: RedisCatalogOptions = {}): Promise<RedisCatalog> {
    const onError = options.onError ?? (() => {});
    const common = {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
      ...(options.password ? { password: options.password } : {}),
    };
    const client = new Redis(url, common);
    const subscriber = new Redis(url, common);
    const catalog = new RedisCatalog(client, subscriber, options);
    let reported = false;
    for (const connection of [client, subscriber]) {
      connection.on('error', (err: Error) => {
        // ioredis retries by itself; report the outage once, not once per retry.
        if (!reported && !catalog.closed) onError(`redis catalog: ${err.message}`);
        reported = true;
      });
    }
    try {
      await client.connect();
      await subscriber.connect();
      await subscriber.subscribe(catalog.channel);
    } catch (err) {
      client.disconnect();
      subscriber.disconnect();
      throw new Error(`cannot reach the Redis catalog at ${redactUrl(url)}: ${(err as Error).message}`);
    }
    reported = false;
    subscriber.on('message', (channel: string, sandboxID: string) => {
      if (channel === catalog.channel) catalog.listeners.emit(sandboxID);
    });
    // Notifications sent while the subscription was down are lost: after a reconnect, forget everything.
    subscriber.on('ready', () => {
      reported = false;
      catalog.listeners.emit(undefined);
    });
    return catalog;
  }

  keyOf(sandboxID: string): string {
    return `${this.prefix}sandbox:${sandboxID}`;
  }

  async get(sandboxID: string): Promise<CatalogEntry | undefined> {
    const fields = await this.client.hgetall(this.keyOf(sandboxID));
    if (Object.keys(fields).length === 0) return undefined;
    try {
      return toCatalogEntry({
        sandboxID,
        host: fields.host,
        agentPort: Number(fields.agentPort),
        tokenHash: fields.tokenHash,
        state: fields.state,
        autoResume: fields.autoResume === 'true',
        ...(fields.hostID ? { hostID: fields.hostID } : {}),
        ...(fields.trafficTokenHash ? { trafficTokenHash: fields.trafficTokenHash } : {}),
        ...(fields.httpsPorts ? { httpsPorts: fields.httpsPorts.split(',').map(Number) } : {}),
        ...(fields.maskRequestHost ? { maskRequestHost: fields.maskRequestHost } : {}),
      });
    } catch (err) {
      throw new Error(`redis catalog: entry ${this.keyOf(sandboxID)} is malformed (${(err as Error).message})`);
    }
  }

  async upsert(input: CatalogEntryInput): Promise<CatalogEntry> {
    const entry = toCatalogEntry(input);
    const key = this.keyOf(entry.sandboxID);
    await this.client
      .multi()
      .del(key)
      .hset(key, {
        host: entry.host,
        agentPort: String(entry.agentPort),
        tokenHash: entry.tokenHash,
        state: entry.state,
        autoResume: String(entry.autoResume),
        ...(entry.hostID !== undefined ? { hostID: entry.hostID } : {}),
        ...(entry.trafficTokenHash !== undefined ? { trafficTokenHash: entry.trafficTokenHash } : {}),
        ...(entry.httpsPorts !== undefined ? { httpsPorts: entry.httpsPorts.join(',') } : {}),
        ...(entry.maskRequestHost !== undefined ? { maskRequestHost: entry.maskRequestHost } : {}),
      })
      .publish(this.channel, entry.sandboxID)
      .exec();
    return entry;
  }

  async remove(sandboxID: string): Promise<boolean> {
    const result = await this.client.multi().del(this.keyOf(sandboxID)).publish(this.channel, sandboxID).exec();
    return result?.[0]?.[1] === 1;
  }

  async setState(sandboxID: string, state: SandboxState): Promise<boolean> {
    const done = await this.client.eval(SET_STATE_IF_PRESENT, 1, this.keyOf(sandboxID), state, this.channel, sandboxID);
    return done === 1;
  }

  onChange(listener: ChangeListener): () => void {
    return this.listeners.add(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await Promise.allSettled([this.subscriber.quit(), this.client.quit()]);
    this.subscriber.disconnect();
    this.client.disconnect();
  }
}

/** Keeps a password in a redis:// URL out of error messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}
