/**
 * Teams and their keys in Redis (the fleet's shared Redis in a fleet, so a key revoked on one host is refused by
 * every host at its next request). Keys are stored only as their sha256; each request's check is one script: the
 * key's record, its team and the key's request count in the current second, in one round trip. The count is held
 * in Redis's memory only, so the check writes nothing that waits for an fsync.
 */
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { hashApiKey, newApiKey } from './api-keys';
import { randomText, LOWER_ALNUM } from '../../util/random-text';
import { ApiError } from '../http/types';
import { DEFAULT_TEAM_ID, DEFAULT_TEAM_NAME, type KeyRecord, type KeyRole, type Quotas, type Team } from './model';

export const DEFAULT_TEAMS_PREFIX = 'sandbox-kit:teams:';

/** The characters of a key shown in lists (enough to tell keys apart, far too few to guess the rest). */
const MASK_LENGTH = 7;

/** Returns [key record, team record, requests of this key in this second], or nil for a key that is not (or no longer) valid. */
const AUTHENTICATE = `
local key = redis.call('HGET', KEYS[1], ARGV[1])
if not key then return false end
local team = redis.call('HGET', KEYS[2], cjson.decode(key).teamID)
if not team then return false end
-- The count is kept out of the append-only file (and replicas): a request never waits for a disk write for it, and
-- a restart of Redis forgets at most this second's counts.
redis.set_repl(redis.REPL_NONE)
local counter = ARGV[3] .. cjson.decode(key).keyID .. ':' .. ARGV[2]
local n = redis.call('INCR', counter)
if n == 1 then redis.call('EXPIRE', counter, 2) end
return {key, team, n}
`;

export interface Authenticated {
  key: KeyRecord;
  team: Team;
  /** This key's requests in the current second, this one included. */
  requestsThisSecond: number;
}

function parse<T>(text: string | null | undefined): T | undefined {
  return text === null || text === undefined ? undefined : (JSON.parse(text) as T);
}

export class TeamStore {
  private readonly k: { teams: string; names: string; keys: string; keyIDs: string; rate: string };

  constructor(
    private readonly redis: Redis,
    prefix = DEFAULT_TEAMS_PREFIX,
  ) {
    this.k = {
      teams: `${prefix}teams`,
      names: `${prefix}team-names`,
      keys: `${prefix}keys`,
      keyIDs: `${prefix}key-ids`,
      rate: `${prefix}rate:`,
    };
    redis.defineCommand('skitAuthenticate', { numberOfKeys: 2, lua: AUTHENTICATE });
  }

  /** The key's record and team, counting this request; undefined for a key that is unknown or revoked. */
  async authenticate(plainKey: string, nowMs = Date.now()): Promise<Authenticated | undefined> {
    const digest = hashApiKey(plainKey);
    const run = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<[string, string, number] | null>>).skitAuthenticate;
    const found = await run.call(this.redis, this.k.keys, this.k.teams, digest, String(Math.floor(nowMs / 1000)), this.k.rate);
    if (!found) return undefined;
    return { key: JSON.parse(found[0]) as KeyRecord, team: JSON.parse(found[1]) as Team, requestsThisSecond: Number(found[2]) };
  }

  async team(teamID: string): Promise<Team | undefined> {
    return parse<Team>(await this.redis.hget(this.k.teams, teamID));
  }

  /** By ID or by name; 404 naming what was looked for. */
  async findTeam(idOrName: string): Promise<Team> {
    const team = (await this.team(idOrName)) ?? (await this.teamByName(idOrName));
    if (!team) throw new ApiError(404, `team ${JSON.stringify(idOrName)} not found (sandbox-kit team list shows the teams)`);
    return team;
  }

  private async teamByName(name: string): Promise<Team | undefined> {
    const id = await this.redis.hget(this.k.names, name);
    return id === null ? undefined : this.team(id);
  }

  async teams(): Promise<Team[]> {
    const all = Object.values(await this.redis.hgetall(this.k.teams)).map((t) => JSON.parse(t) as Team);
    return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name));
  }

  /** 409 when the name is taken; the name is claimed first, so two creates of one name cannot both succeed. */
  async createTeam(name: string, quotas: Quotas, teamID: string = randomUUID()): Promise<Team> {
    if ((await this.redis.hsetnx(this.k.names, name, teamID)) === 0) {
      throw new ApiError(409, `a team named ${JSON.stringify(name)} already exists; choose another name`);
    }
    const team: Team = { teamID, name, createdAt: new Date().toISOString(), quotas };
    await this.redis.hset(this.k.teams, teamID, JSON.stringify(team));
    return team;
  }

  async putTeam(team: Team): Promise<void> {
    await this.redis.hset(this.k.teams, team.teamID, JSON.stringify(team));
  }

  /** Removes the team and every key of it (they stop working at their next request). */
  async deleteTeam(team: Team): Promise<void> {
    const keys = (await this.keys()).filter((k) => k.record.teamID === team.teamID);
    const multi = this.redis.multi().hdel(this.k.teams, team.teamID).hdel(this.k.names, team.name);
    for (const k of keys) multi.hdel(this.k.keys, k.digest).hdel(this.k.keyIDs, k.record.keyID);
    await multi.exec();
  }

  /** The default team exists on every platform: made on first start (a fleet's hosts may race: HSETNX decides). */
  async ensureDefaultTeam(): Promise<Team> {
    const existing = await this.team(DEFAULT_TEAM_ID);
    if (existing) return existing;
    const team: Team = { teamID: DEFAULT_TEAM_ID, name: DEFAULT_TEAM_NAME, createdAt: new Date(0).toISOString(), quotas: {} };
    await this.redis.multi().hsetnx(this.k.teams, team.teamID, JSON.stringify(team)).hsetnx(this.k.names, team.name, team.teamID).exec();
    return (await this.team(DEFAULT_TEAM_ID)) as Team;
  }

  /** Makes a key for the team and returns it: the only moment the plain key exists outside its holder. */
  async createKey(teamID: string, name: string, role: KeyRole): Promise<{ key: string; record: KeyRecord }> {
    const key = newApiKey();
    const record = this.record(key, teamID, name, role, 'issued');
    await this.redis
      .multi()
      .hset(this.k.keys, hashApiKey(key), JSON.stringify(record))
      .hset(this.k.keyIDs, record.keyID, hashApiKey(key))
      .exec();
    // A team deleted meanwhile: its new key would be refused anyway (no team), but it should not linger.
    if (!(await this.team(teamID))) {
      await this.revokeKey(record.keyID);
      throw new ApiError(404, `team ${JSON.stringify(teamID)} not found`);
    }
    return { key, record };
  }

  private record(key: string, teamID: string, name: string, role: KeyRole, source: KeyRecord['source']): KeyRecord {
    return {
      keyID: `key_${randomText(LOWER_ALNUM, 16)}`,
      teamID,
      name,
      role,
      createdAt: new Date().toISOString(),
      mask: `${key.slice(0, MASK_LENGTH)}…`,
      source,
    };
  }

  async keys(): Promise<Array<{ digest: string; record: KeyRecord }>> {
    const all = Object.entries(await this.redis.hgetall(this.k.keys)).map(([digest, text]) => ({
      digest,
      record: JSON.parse(text) as KeyRecord,
    }));
    return all.sort((a, b) => a.record.createdAt.localeCompare(b.record.createdAt) || a.record.keyID.localeCompare(b.record.keyID));
  }

  /** False when no key has that ID (already revoked, or never made). */
  async revokeKey(keyID: string): Promise<boolean> {
    const digest = await this.redis.hget(this.k.keyIDs, keyID);
    if (digest === null) return false;
    await this.redis.multi().hdel(this.k.keys, digest).hdel(this.k.keyIDs, keyID).exec();
    return true;
  }

  /**
   * The key file's keys become the default team's admin keys: keys that left the file stop working, new ones start,
   * the ones still there keep their IDs (so the audit trail goes on naming them the same).
   */
  async syncFileKeys(plainKeys: readonly string[]): Promise<void> {
    await this.ensureDefaultTeam();
    const wanted = new Map(plainKeys.map((k) => [hashApiKey(k), k]));
    const existing = (await this.keys()).filter((k) => k.record.source === 'file');
    const multi = this.redis.multi();
    for (const { digest, record } of existing) {
      if (wanted.has(digest)) wanted.delete(digest);
      else multi.hdel(this.k.keys, digest).hdel(this.k.keyIDs, record.keyID);
    }
    for (const [digest, key] of wanted) {
      const record = this.record(key, DEFAULT_TEAM_ID, 'key-file', 'admin', 'file');
      multi.hset(this.k.keys, digest, JSON.stringify(record)).hset(this.k.keyIDs, record.keyID, digest);
    }
    await multi.exec();
  }
}
