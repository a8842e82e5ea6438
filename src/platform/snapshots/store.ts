/**
 * Snapshots in Redis: one hash, snapshotID -> JSON record. A snapshot is an immutable layer set: a frozen copy of a
 * sandbox's filesystem changes on top of the layers that sandbox was made from, plus what its template gave it.
 */
import type Redis from 'ioredis';
import type { TemplateForSandbox } from '../sandboxes/template-resolver';
import { DEFAULT_STORE_PREFIX } from '../sandboxes/store';

export interface SnapshotRecord {
  snapshotID: string;
  /** Given at create; a create by this name takes the newest snapshot that has it. */
  name?: string;
  /** The sandbox it was taken from. */
  sandboxID: string;
  /** The team of that sandbox: only it (and admins) see, use and delete the snapshot. */
  teamID?: string;
  /** ISO-8601 UTC. */
  createdAt: string;
  /** The directory holding the frozen copy (the topmost of template.layers). */
  layerDir: string;
  /** What a sandbox made from it starts with: layers topmost first, commands, env, user, limits. */
  template: TemplateForSandbox;
}

export class SnapshotStore {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_STORE_PREFIX,
  ) {
    this.key = `${prefix}snapshots`;
  }

  async put(record: SnapshotRecord): Promise<void> {
    await this.redis.hset(this.key, record.snapshotID, JSON.stringify(record));
  }

  async get(snapshotID: string): Promise<SnapshotRecord | undefined> {
    const text = await this.redis.hget(this.key, snapshotID);
    return text === null ? undefined : (JSON.parse(text) as SnapshotRecord);
  }

  async delete(snapshotID: string): Promise<void> {
    await this.redis.hdel(this.key, snapshotID);
  }

  async all(): Promise<SnapshotRecord[]> {
    const fields = await this.redis.hgetall(this.key);
    return Object.values(fields).map((text) => JSON.parse(text) as SnapshotRecord);
  }
}
