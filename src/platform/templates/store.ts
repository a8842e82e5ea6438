/**
 * Templates, builds, build logs, uploaded files and the layer cache index, kept in the platform's Redis under one key
 * prefix. Each record is one JSON value; logs are a Redis list, so appending a line and reading from an offset are
 * single commands and a poller sees every line the moment it is written.
 */
import type Redis from 'ioredis';
import type { BuildReason, BuildStatus, LogEntry, Step } from './wire';

export const DEFAULT_KEY_PREFIX = 'sk:tpl:';

export interface TemplateRecord {
  templateID: string;
  /** Names (E2B aliases) without tags; the first is the one it was created with. */
  names: string[];
  cpuCount: number;
  memoryMB: number;
  createdAt: string;
  updatedAt: string;
  /** The build sandboxes start from; absent until a build is ready. */
  readyBuildID?: string;
  buildCount: number;
}

export interface BuildRecord {
  buildID: string;
  templateID: string;
  status: BuildStatus;
  reason?: BuildReason;
  createdAt: string;
  updatedAt: string;
  cpuCount: number;
  memoryMB: number;
  tags: string[];
  fromImage?: string;
  steps?: Step[];
  startCmd?: string;
  readyCmd?: string;
  /** Read-only layers, topmost first; the last is the base root filesystem. */
  layers: string[];
  envs: Record<string, string>;
  user: string;
  workdir?: string;
}

/** A layer made by one step: where it is, keyed by what made it (see cache-key.ts). */
export interface CachedLayer {
  dir: string;
  createdAt: string;
}

export class TemplateStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = DEFAULT_KEY_PREFIX,
  ) {}

  private key(...parts: string[]): string {
    return this.prefix + parts.join(':');
  }

  private async getJson<T>(key: string): Promise<T | undefined> {
    const raw = await this.redis.get(key);
    return raw === null ? undefined : (JSON.parse(raw) as T);
  }

  async putTemplate(t: TemplateRecord): Promise<void> {
    const multi = this.redis.multi().set(this.key('template', t.templateID), JSON.stringify(t)).sadd(this.key('templates'), t.templateID);
    for (const name of t.names) multi.set(this.key('name', name), t.templateID);
    await multi.exec();
  }

  getTemplate(templateID: string): Promise<TemplateRecord | undefined> {
    return this.getJson(this.key('template', templateID));
  }

  async templateIDByName(name: string): Promise<string | undefined> {
    return (await this.redis.get(this.key('name', name))) ?? undefined;
  }

  /** By ID first, then by name (a `name:tag` resolves by its name). */
  async findTemplate(idOrName: string): Promise<TemplateRecord | undefined> {
    const byId = await this.getTemplate(idOrName);
    if (byId) return byId;
    const id = await this.templateIDByName(idOrName.split(':')[0]!);
    return id === undefined ? undefined : this.getTemplate(id);
  }

  async listTemplates(): Promise<TemplateRecord[]> {
    const ids = await this.redis.smembers(this.key('templates'));
    const records = await Promise.all(ids.map((id) => this.getTemplate(id)));
    return records.filter((r): r is TemplateRecord => r !== undefined).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async deleteTemplate(t: TemplateRecord): Promise<void> {
    const multi = this.redis.multi().del(this.key('template', t.templateID)).srem(this.key('templates'), t.templateID);
    for (const name of t.names) multi.del(this.key('name', name));
    await multi.exec();
  }

  async putBuild(b: BuildRecord): Promise<void> {
    await this.redis.multi().set(this.key('build', b.buildID), JSON.stringify(b)).sadd(this.key('builds', b.templateID), b.buildID).exec();
  }

  getBuild(buildID: string): Promise<BuildRecord | undefined> {
    return this.getJson(this.key('build', buildID));
  }

  async buildsOf(templateID: string): Promise<string[]> {
    return this.redis.smembers(this.key('builds', templateID));
  }

  /** Marks `buildID` as the one running build of its template; false when another one holds the claim. */
  async claimRunning(templateID: string, buildID: string): Promise<boolean> {
    return (await this.redis.set(this.key('running', templateID), buildID, 'NX')) === 'OK';
  }

  async runningBuild(templateID: string): Promise<string | undefined> {
    return (await this.redis.get(this.key('running', templateID))) ?? undefined;
  }

  /** Releases the claim only if `buildID` still holds it. */
  async releaseRunning(templateID: string, buildID: string): Promise<void> {
    const key = this.key('running', templateID);
    await this.redis.eval(
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
      1,
      key,
      buildID,
    );
  }

  async appendLog(buildID: string, entry: LogEntry): Promise<void> {
    await this.redis.rpush(this.key('build', buildID, 'logs'), JSON.stringify(entry));
  }

  /** Entries from `offset` on, at most `limit`. */
  async logs(buildID: string, offset: number, limit: number): Promise<LogEntry[]> {
    const raw = await this.redis.lrange(this.key('build', buildID, 'logs'), offset, offset + limit - 1);
    return raw.map((r) => JSON.parse(r) as LogEntry);
  }

  async lastLogs(buildID: string, count: number): Promise<LogEntry[]> {
    const raw = await this.redis.lrange(this.key('build', buildID, 'logs'), -count, -1);
    return raw.map((r) => JSON.parse(r) as LogEntry);
  }

  getLayer(cacheKey: string): Promise<CachedLayer | undefined> {
    return this.getJson(this.key('layer', cacheKey));
  }

  async putLayer(cacheKey: string, layer: CachedLayer): Promise<void> {
    await this.redis.set(this.key('layer', cacheKey), JSON.stringify(layer));
  }

  async deleteLayer(cacheKey: string): Promise<void> {
    await this.redis.del(this.key('layer', cacheKey));
  }

  /** Uploaded COPY archives by files hash: the path of the stored tar. */
  async filePath(hash: string): Promise<string | undefined> {
    return (await this.redis.get(this.key('file', hash))) ?? undefined;
  }

  async putFile(hash: string, path: string): Promise<void> {
    await this.redis.set(this.key('file', hash), path);
  }

  async deleteFile(hash: string): Promise<void> {
    await this.redis.del(this.key('file', hash));
  }
}
