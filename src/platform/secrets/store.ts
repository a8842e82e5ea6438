/**
 * Secrets in Redis: one hash of records (secretID -> JSON, never the value), one of sealed values (secretID ->
 * the current version's value, sealed), and one of names (`<teamID>/<name>` -> secretID), so two creates of one name in
 * one team can never both win (HSETNX).
 */
import type Redis from 'ioredis';
import { DEFAULT_STORE_PREFIX } from '../sandboxes/store';

export interface SecretRecord {
  secretID: string;
  /** Lower-cased, unique within its team. */
  name: string;
  teamID: string;
  /** 1 for a new secret; each update stores a new version and serves it from then on. */
  currentVersion: number;
  metadata: Record<string, string>;
  /** ISO-8601 UTC. */
  createdAt: string;
  updatedAt: string;
}

export class SecretStore {
  private readonly records: string;
  private readonly values: string;
  private readonly names: string;

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_STORE_PREFIX,
  ) {
    this.records = `${prefix}secrets`;
    this.values = `${prefix}secret-values`;
    this.names = `${prefix}secret-names`;
  }

  /** false when the team has a secret of that name already (nothing is written then). */
  async add(record: SecretRecord, sealed: string): Promise<boolean> {
    if ((await this.redis.hsetnx(this.names, `${record.teamID}/${record.name}`, record.secretID)) === 0) return false;
    await this.put(record, sealed);
    return true;
  }

  /** The record and its sealed value, in one transaction. */
  async put(record: SecretRecord, sealed: string): Promise<void> {
    await this.redis.multi().hset(this.values, record.secretID, sealed).hset(this.records, record.secretID, JSON.stringify(record)).exec();
  }

  async get(secretID: string): Promise<SecretRecord | undefined> {
    const text = await this.redis.hget(this.records, secretID);
    return text === null ? undefined : (JSON.parse(text) as SecretRecord);
  }

  async byName(teamID: string, name: string): Promise<SecretRecord | undefined> {
    const id = await this.redis.hget(this.names, `${teamID}/${name}`);
    return id === null ? undefined : this.get(id);
  }

  async sealedValue(secretID: string): Promise<string | undefined> {
    return (await this.redis.hget(this.values, secretID)) ?? undefined;
  }

  async delete(record: SecretRecord): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.records, record.secretID)
      .hdel(this.values, record.secretID)
      .hdel(this.names, `${record.teamID}/${record.name}`)
      .exec();
  }

  async all(): Promise<SecretRecord[]> {
    return Object.values(await this.redis.hgetall(this.records)).map((text) => JSON.parse(text) as SecretRecord);
  }
}
