/**
 * Templates, builds, build logs, uploaded files and the layer cache index, kept in the platform's Redis under one key
 * prefix. Each record is one JSON value; logs are a Redis list, so appending a line and reading from an offset are
 * single commands and a poller sees every line the moment it is written.
 */
import type Redis from 'ioredis';
import { teamOf } from '../teams/model';
import type { BuildReason, BuildStatus, LogEntry, Step } from './wire';

export const DEFAULT_KEY_PREFIX = 'sk:tpl:';

export interface TemplateRecord {
  templateID: string;
  /** The team that owns it (absent on records older than teams: the default team's). */
  teamID?: string;
  /** Readable and startable by every team (E2B's `public`); only its own team builds, changes or deletes it. */
  public?: boolean;
  /** Names (E2B aliases) without tags; the first is the one it was created with. */
  names: string[];
  cpuCount: number;
  memoryMB: number;
  /** The disk of its sandboxes (limits.ts); absent on records older than disks: the platform's default. */
  diskSizeMB?: number;
  createdAt: string;
  updatedAt: string;
  /** The build sandboxes start from; absent until a build is ready. */
  readyBuildID?: string;
  buildCount: number;
}

export interface BuildRecord {
  buildID: string;
  templateID: string;
  /** The template's team: its COPY steps read that team's uploads, and its layers are cached for that team only. */
  teamID?: string;
  status: BuildStatus;
  reason?: BuildReason;
  createdAt: string;
  updatedAt: string;
  cpuCount: number;
  memoryMB: number;
  /** The disk of its sandboxes; absent on records older than disks: the platform's default. */
  diskSizeMB?: number;
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

/** An uploaded archive: where it is, its size, and the digest of its bytes (what a COPY layer is cached by). */
export interface StoredFile {
  path: string;
  bytes: number;
  sha256: string;
  /**
   * Whether its files hash can be recomputed from it (no directory, no hard link: files-hash.ts); false skips that
   * read at a build's start. Absent (stored before this was recorded): it is tried.
   */
  checkable?: boolean;
}

/** Which build a tag points at, and since when. */
export interface TagRecord {
  buildID: string;
  createdAt: string;
}

/** Points every tag of ARGV[3..] at the build the tag ARGV[1] points at, in one step; nil when ARGV[1] is not set. */
const ASSIGN_FROM_TAG = `
local source = redis.call('hget', KEYS[1], ARGV[1])
if not source then return nil end
local buildID = cjson.decode(source).buildID
local value = cjson.encode({buildID = buildID, createdAt = ARGV[2]})
for i = 3, #ARGV do redis.call('hset', KEYS[1], ARGV[i], value) end
return buildID
`;

/** Removes every tag of ARGV, or none: the ones not set are returned and nothing changes. */
const REMOVE_ALL_OR_NONE = `
local missing = {}
for i = 1, #ARGV do
  if redis.call('hexists', KEYS[1], ARGV[i]) == 0 then table.insert(missing, ARGV[i]) end
end
if #missing > 0 then return missing end
redis.call('hdel', KEYS[1], unpack(ARGV))
return {}
`;

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

  /** Names are each team's own (two teams may both have a "my-app"); a public template's names are also everyone's. */
  async putTemplate(t: TemplateRecord): Promise<void> {
    const multi = this.redis.multi().set(this.key('template', t.templateID), JSON.stringify(t)).sadd(this.key('templates'), t.templateID);
    for (const name of t.names) multi.set(this.key('name', teamOf(t), name), t.templateID);
    await multi.exec();
  }

  getTemplate(templateID: string): Promise<TemplateRecord | undefined> {
    return this.getJson(this.key('template', templateID));
  }

  async templateIDByName(teamID: string, name: string): Promise<string | undefined> {
    return (await this.redis.get(this.key('name', teamID, name))) ?? undefined;
  }

  async publicTemplateIDByName(name: string): Promise<string | undefined> {
    return (await this.redis.get(this.key('public-name', name))) ?? undefined;
  }

  /**
   * Makes a template public (its names become everyone's) or private again; false when a name is already another
   * public template's (names claimed first, so two publishes of one name cannot both win).
   */
  async setPublic(t: TemplateRecord, visible: boolean): Promise<boolean> {
    if (visible) {
      const claimed: string[] = [];
      for (const name of t.names) {
        const owner = await this.redis.set(this.key('public-name', name), t.templateID, 'NX');
        if (owner === 'OK' || (await this.publicTemplateIDByName(name)) === t.templateID) claimed.push(name);
        else {
          for (const c of claimed) await this.releasePublicName(c, t.templateID);
          return false;
        }
      }
    } else for (const name of t.names) await this.releasePublicName(name, t.templateID);
    await this.putTemplate({ ...t, public: visible });
    return true;
  }

  private async releasePublicName(name: string, templateID: string): Promise<void> {
    await this.redis.eval(
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
      1,
      this.key('public-name', name),
      templateID,
    );
  }

  /** The team's own by ID, then by name (a `name:tag` resolves by its name). */
  async findTemplate(teamID: string, idOrName: string): Promise<TemplateRecord | undefined> {
    const byId = await this.getTemplate(idOrName);
    if (byId && teamOf(byId) === teamID) return byId;
    const id = await this.templateIDByName(teamID, idOrName.split(':')[0]!);
    return id === undefined ? undefined : this.getTemplate(id);
  }

  /** What a team may start from: its own (by ID or name), else a public template (by ID or public name). */
  async findUsable(teamID: string, idOrName: string): Promise<TemplateRecord | undefined> {
    const own = await this.findTemplate(teamID, idOrName);
    if (own) return own;
    const byId = await this.getTemplate(idOrName);
    if (byId?.public) return byId;
    const id = await this.publicTemplateIDByName(idOrName.split(':')[0]!);
    return id === undefined ? undefined : this.getTemplate(id);
  }

  async listTemplates(): Promise<TemplateRecord[]> {
    const ids = await this.redis.smembers(this.key('templates'));
    const records = await Promise.all(ids.map((id) => this.getTemplate(id)));
    return records.filter((r): r is TemplateRecord => r !== undefined).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async deleteTemplate(t: TemplateRecord): Promise<void> {
    for (const name of t.names) await this.releasePublicName(name, t.templateID);
    const multi = this.redis
      .multi()
      .del(this.key('template', t.templateID))
      .del(this.key('tags', t.templateID))
      .srem(this.key('templates'), t.templateID);
    for (const name of t.names) multi.del(this.key('name', teamOf(t), name));
    await multi.exec();
  }

  /** Templates stored before teams had one name index for all; they become the default team's. Returns how many. */
  async adoptTeamlessTemplates(): Promise<number> {
    let adopted = 0;
    for (const t of await this.listTemplates()) {
      if (t.teamID !== undefined) continue;
      const owned = { ...t, teamID: teamOf(t) };
      await this.putTemplate(owned);
      for (const name of t.names)
        if ((await this.redis.get(this.key('name', name))) === t.templateID) await this.redis.del(this.key('name', name));
      adopted += 1;
    }
    return adopted;
  }

  /** Points `tags` at `buildID`, all in one command (a create never sees half of a move). */
  async setTags(templateID: string, tags: readonly string[], buildID: string, createdAt: string): Promise<void> {
    const value = JSON.stringify({ buildID, createdAt } satisfies TagRecord);
    await this.redis.hset(this.key('tags', templateID), Object.fromEntries(tags.map((t) => [t, value])));
  }

  /** Points `tags` at the build `fromTag` points at; undefined (nothing changed) when `fromTag` is not set. */
  async assignFromTag(templateID: string, fromTag: string, tags: readonly string[], createdAt: string): Promise<string | undefined> {
    const result = await this.redis.eval(ASSIGN_FROM_TAG, 1, this.key('tags', templateID), fromTag, createdAt, ...tags);
    return typeof result === 'string' ? result : undefined;
  }

  /** Removes all of `tags` or, when some are not set, none; resolves to the ones not set. */
  async removeTags(templateID: string, tags: readonly string[]): Promise<string[]> {
    return (await this.redis.eval(REMOVE_ALL_OR_NONE, 1, this.key('tags', templateID), ...tags)) as string[];
  }

  async tag(templateID: string, tag: string): Promise<TagRecord | undefined> {
    const raw = await this.redis.hget(this.key('tags', templateID), tag);
    return raw === null ? undefined : (JSON.parse(raw) as TagRecord);
  }

  async tags(templateID: string): Promise<Map<string, TagRecord>> {
    const all = await this.redis.hgetall(this.key('tags', templateID));
    return new Map(Object.entries(all).map(([tag, raw]) => [tag, JSON.parse(raw) as TagRecord]));
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

  /** The IDs of the templates that have build records, deleted templates' included. */
  async templatesWithBuilds(): Promise<string[]> {
    return (await this.scanKeys(this.key('builds', ''))).map((k) => k.slice(this.key('builds', '').length));
  }

  /** A build's record and log (the set of its template's builds loses it; Redis removes an empty set). */
  async deleteBuild(templateID: string, buildID: string): Promise<void> {
    await this.redis
      .multi()
      .del(this.key('build', buildID))
      .del(this.key('build', buildID, 'logs'))
      .srem(this.key('builds', templateID), buildID)
      .exec();
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

  /** Every entry of the layer cache, by cache key. */
  async layerCache(): Promise<Map<string, CachedLayer>> {
    const out = new Map<string, CachedLayer>();
    for (const [key, value] of await this.scanValues(this.key('layer', ''))) out.set(key, JSON.parse(value) as CachedLayer);
    return out;
  }

  /** Every team's uploads: `{teamID, hash, file}`. */
  async allFiles(): Promise<Array<{ teamID: string; hash: string; file: StoredFile }>> {
    return (await this.scanValues(this.key('file', ''))).flatMap(([rest, value]) => {
      const cut = rest.lastIndexOf(':');
      return cut < 0 ? [] : [{ teamID: rest.slice(0, cut), hash: rest.slice(cut + 1), file: JSON.parse(value) as StoredFile }];
    });
  }

  /** Every key under `prefix`. */
  private async scanKeys(prefix: string): Promise<string[]> {
    const keys = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]]/g, '\\$&')}*`, 'COUNT', 1000);
      cursor = next;
      for (const k of batch) keys.add(k);
    } while (cursor !== '0');
    return [...keys];
  }

  /** [key without `prefix`, value] of every string key under `prefix`. */
  private async scanValues(prefix: string): Promise<Array<[string, string]>> {
    const keys = await this.scanKeys(prefix);
    if (keys.length === 0) return [];
    const values = await this.redis.mget(...keys);
    return keys.flatMap((k, i) => (values[i] === null || values[i] === undefined ? [] : [[k.slice(prefix.length), values[i] as string]]));
  }

  /** A team's uploaded COPY archive by files hash: the stored tar, and the sha256 of its bytes as received. */
  getFile(teamID: string, hash: string): Promise<StoredFile | undefined> {
    return this.getJson(this.key('file', teamID, hash));
  }

  async putFile(teamID: string, hash: string, file: StoredFile): Promise<void> {
    await this.redis.set(this.key('file', teamID, hash), JSON.stringify(file));
  }

  async deleteFile(teamID: string, hash: string): Promise<void> {
    await this.redis.del(this.key('file', teamID, hash));
  }
}
