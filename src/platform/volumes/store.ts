/**
 * Volumes in Redis: one hash, volumeID -> JSON record, and one of names, `<teamID>/<name>` -> volumeID, so two
 * creates of one name in one team can never both win (HSETNX).
 */
import type Redis from 'ioredis';
import { DEFAULT_STORE_PREFIX } from '../sandboxes/store';

export interface VolumeRecord {
  volumeID: string;
  /** Unique within its team; sandboxes mount it by this name. */
  name: string;
  teamID: string;
  /** ISO-8601 UTC. */
  createdAt: string;
  /** The volume's own token for its file API (`Authorization: Bearer`); handed back by create and get. */
  token: string;
  /** What it holds of its team's stored bytes (its size at its last change through the file API). */
  heldBytes?: number;
  /** Set while it is being destroyed: no new sandbox mounts it. */
  destroying?: boolean;
}

export class VolumeStore {
  private readonly key: string;
  private readonly names: string;

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_STORE_PREFIX,
  ) {
    this.key = `${prefix}volumes`;
    this.names = `${prefix}volume-names`;
  }

  /** false when the team has a volume of that name already (nothing is written then). */
  async add(record: VolumeRecord): Promise<boolean> {
    const claimed = await this.redis.hsetnx(this.names, `${record.teamID}/${record.name}`, record.volumeID);
    if (claimed === 0) return false;
    await this.put(record);
    return true;
  }

  async put(record: VolumeRecord): Promise<void> {
    await this.redis.hset(this.key, record.volumeID, JSON.stringify(record));
  }

  async get(volumeID: string): Promise<VolumeRecord | undefined> {
    const text = await this.redis.hget(this.key, volumeID);
    return text === null ? undefined : (JSON.parse(text) as VolumeRecord);
  }

  async byName(teamID: string, name: string): Promise<VolumeRecord | undefined> {
    const id = await this.redis.hget(this.names, `${teamID}/${name}`);
    return id === null ? undefined : this.get(id);
  }

  async delete(record: VolumeRecord): Promise<void> {
    await this.redis.hdel(this.key, record.volumeID);
    await this.redis.hdel(this.names, `${record.teamID}/${record.name}`);
  }

  async all(): Promise<VolumeRecord[]> {
    return Object.values(await this.redis.hgetall(this.key)).map((text) => JSON.parse(text) as VolumeRecord);
  }
}
