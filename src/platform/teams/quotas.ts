/**
 * The quota ledger: what each team holds (sandboxes, vCPUs, MiB, builds, stored bytes) and the holds that make it
 * up, in the same Redis as the teams (the fleet's shared one in a fleet). A reservation is one script that compares
 * every wanted amount with the team's quota and takes them all or none, so two creates at once, on one host or on
 * two, can never both take the last slot. Releasing a hold is idempotent: only the first release gives it back.
 */
import type Redis from 'ioredis';
import { ApiError } from '../http/types';
import { HELD_QUOTAS, QUOTA_LABELS, type HeldQuota, type Quotas, type Usage } from './model';
import type { TeamMetrics } from './metrics';
import { DEFAULT_TEAMS_PREFIX } from './store';

/** Returns {'ok'} or {'over', quota, limit, used} or {'no-team'}. ARGV: teamID, holdID, hold JSON, then name/amount pairs. */
const RESERVE = `
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return {'ok'} end
local team = redis.call('HGET', KEYS[1], ARGV[1])
if not team then return {'no-team'} end
local quotas = cjson.decode(team).quotas or {}
for i = 4, #ARGV, 2 do
  local limit = quotas[ARGV[i]]
  if limit ~= nil and limit ~= cjson.null then
    local used = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0')
    if used + tonumber(ARGV[i + 1]) > limit then return {'over', ARGV[i], tostring(limit), tostring(used)} end
  end
end
for i = 4, #ARGV, 2 do redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
return {'ok', redis.call('HGET', KEYS[2], 'sandboxes') or '0'}
`;

const RELEASE = `
local hold = redis.call('HGET', KEYS[2], ARGV[1])
if not hold then return false end
redis.call('HDEL', KEYS[2], ARGV[1])
for name, amount in pairs(cjson.decode(hold).amounts) do redis.call('HINCRBY', KEYS[1], name, '-' .. amount) end
return redis.call('HGET', KEYS[1], 'sandboxes') or '0'
`;

/** Sets a hold to what was measured, whatever the quota: {'ok'} or {'no-team'}. ARGV: teamID, holdID, hold JSON, then name/amount pairs. */
const SET_HOLD = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {'no-team'} end
local old = redis.call('HGET', KEYS[3], ARGV[2])
if old then
  for name, amount in pairs(cjson.decode(old).amounts) do redis.call('HINCRBY', KEYS[2], name, '-' .. amount) end
end
for i = 4, #ARGV, 2 do redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
return {'ok'}
`;

/** Sets the given quotas (null removes one) unless a held one would fall below current use: {'ok'} or {'below', quota, used}. */
const SET_QUOTAS = `
local text = redis.call('HGET', KEYS[1], ARGV[1])
if not text then return {'no-team'} end
local team = cjson.decode(text)
if team.quotas == nil or team.quotas == cjson.null then team.quotas = {} end
local patch = cjson.decode(ARGV[2])
for name, value in pairs(patch) do
  if value ~= cjson.null then
    local used = tonumber(redis.call('HGET', KEYS[2], name) or '0')
    if used > value then return {'below', name, tostring(used)} end
  end
end
for name, value in pairs(patch) do
  if value == cjson.null then team.quotas[name] = nil else team.quotas[name] = value end
end
local out = cjson.encode(team)
redis.call('HSET', KEYS[1], ARGV[1], out)
return {'ok', out}
`;

/** One hold: a sandbox (sandbox:ID), a build (build:ID), stored bytes (bytes:WHAT). */
export type HoldID = `sandbox:${string}` | `build:${string}` | `bytes:${string}`;
export type Amounts = Partial<Record<HeldQuota, number>>;

interface Hold {
  /** The host that holds it (a fleet host's ID; "local" on a single platform), so each host sweeps only its own. */
  host: string;
  amounts: Record<string, string>;
}

/** The 429 a request beyond a quota gets: which quota, its value, what the team uses now. */
export function quotaExceeded(quota: keyof typeof QUOTA_LABELS, limit: number, used: number, wanted: number): ApiError {
  return new ApiError(
    429,
    `quota exceeded: ${QUOTA_LABELS[quota]} (${quota}) is ${limit} for this team, which uses ${used} now and asked for ${wanted} more; nothing was made`,
  );
}

type Run = (...args: unknown[]) => Promise<unknown>;

export class QuotaLedger {
  private readonly k: { teams: string; usage: (t: string) => string; held: (t: string) => string };

  constructor(
    private readonly redis: Redis,
    private readonly host = 'local',
    prefix = DEFAULT_TEAMS_PREFIX,
    /** Sampled at every sandbox hold taken or given back (the teams' metrics). */
    private readonly metrics?: TeamMetrics,
  ) {
    this.k = { teams: `${prefix}teams`, usage: (t) => `${prefix}usage:${t}`, held: (t) => `${prefix}held:${t}` };
    redis.defineCommand('skitReserve', { numberOfKeys: 3, lua: RESERVE });
    redis.defineCommand('skitRelease', { numberOfKeys: 2, lua: RELEASE });
    redis.defineCommand('skitSetQuotas', { numberOfKeys: 2, lua: SET_QUOTAS });
    redis.defineCommand('skitSetHold', { numberOfKeys: 3, lua: SET_HOLD });
  }

  private command(name: string): Run {
    const run = (this.redis as unknown as Record<string, Run>)[name] as Run;
    return (...args) => run.apply(this.redis, args);
  }

  /** The keys and arguments of a hold's script (reserve, setHold): the hold's record and its nonzero amounts. */
  private holdArgs(teamID: string, hold: HoldID, amounts: Amounts): string[] {
    const pairs = Object.entries(amounts).filter(([, v]) => v !== undefined && v !== 0);
    const record: Hold = { host: this.host, amounts: Object.fromEntries(pairs.map(([k, v]) => [k, String(v)])) };
    return [
      this.k.teams,
      this.k.usage(teamID),
      this.k.held(teamID),
      teamID,
      hold,
      JSON.stringify(record),
      ...pairs.flatMap(([k, v]) => [k, String(v)]),
    ];
  }

  /** Takes every amount or none; 429 naming the first quota that would be exceeded. Reserving a held ID again is a no-op. */
  async reserve(teamID: string, hold: HoldID, amounts: Amounts): Promise<void> {
    const result = (await this.command('skitReserve')(...this.holdArgs(teamID, hold, amounts))) as string[];
    if (result[0] === 'ok') {
      if (hold.startsWith('sandbox:')) this.sample(teamID, Number(result[1]), true);
      return;
    }
    if (result[0] === 'no-team') throw new ApiError(404, `team ${JSON.stringify(teamID)} not found`);
    const quota = result[1] as HeldQuota;
    throw quotaExceeded(quota, Number(result[2]), Number(result[3]), amounts[quota] ?? 0);
  }

  /**
   * Sets a hold to a measured amount with no quota check: what a volume's disk holds is a fact (its sandboxes wrote
   * it), not a request. The team may be over its quota afterwards; overQuota tells, and what asks for more is refused.
   */
  async setHold(teamID: string, hold: HoldID, amounts: Amounts): Promise<void> {
    await this.command('skitSetHold')(...this.holdArgs(teamID, hold, amounts));
  }

  /** The quota and the team's use of it when the use is above it (a measured hold can take it there), else undefined. */
  async overQuota(teamID: string, quota: HeldQuota): Promise<{ limit: number; used: number } | undefined> {
    const text = await this.redis.hget(this.k.teams, teamID);
    const limit = text ? (JSON.parse(text) as { quotas?: Quotas }).quotas?.[quota] : undefined;
    if (limit === undefined || limit === null) return undefined;
    const used = Number((await this.redis.hget(this.k.usage(teamID), quota)) ?? 0);
    return used > limit ? { limit, used } : undefined;
  }

  /** Gives a hold back; false when it was already given back. */
  async release(teamID: string, hold: HoldID): Promise<boolean> {
    const after = (await this.command('skitRelease')(this.k.usage(teamID), this.k.held(teamID), hold)) as string | null;
    if (after === null) return false;
    if (hold.startsWith('sandbox:')) this.sample(teamID, Number(after), false);
    return true;
  }

  /**
   * A metrics sample, sent without waiting for it: a create does not wait for a second write (and its fsync) before it
   * goes on. Redis answers one connection's commands in order, so every later read sees it; a sample Redis refuses is
   * lost alone (the next call meets the same Redis).
   */
  private sample(teamID: string, concurrent: number, started: boolean): void {
    this.metrics?.sample(teamID, concurrent, started).catch(() => undefined);
  }

  async usage(teamID: string): Promise<Usage> {
    const raw = await this.redis.hgetall(this.k.usage(teamID));
    return Object.fromEntries(HELD_QUOTAS.map((q) => [q, Number(raw[q] ?? 0)])) as Usage;
  }

  /**
   * At a start: gives back this host's holds that nothing holds any more (sandboxes it no longer has, builds, which
   * never outlive their platform), e.g. those of a create a crash cut short. Returns how many.
   */
  async sweepHere(stillHeld: (hold: string) => boolean): Promise<number> {
    let released = 0;
    for (const teamID of await this.teamsWithHolds()) {
      for (const [id, text] of Object.entries(await this.redis.hgetall(this.k.held(teamID)))) {
        if ((JSON.parse(text) as Hold).host !== this.host || stillHeld(id)) continue;
        if (await this.release(teamID, id as HoldID)) released += 1;
      }
    }
    return released;
  }

  private async teamsWithHolds(): Promise<string[]> {
    const prefix = this.k.held('');
    const teams: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) teams.push(key.slice(prefix.length));
    } while (cursor !== '0');
    return teams;
  }

  /** Applies a quota change atomically with the check against current use; returns the team's new quotas. */
  async setQuotas(teamID: string, patch: Quotas): Promise<Quotas> {
    const result = (await this.command('skitSetQuotas')(this.k.teams, this.k.usage(teamID), teamID, JSON.stringify(patch))) as string[];
    if (result[0] === 'no-team') throw new ApiError(404, `team ${JSON.stringify(teamID)} not found`);
    if (result[0] === 'below') {
      const quota = result[1] as HeldQuota;
      throw new ApiError(
        409,
        `${quota}: ${patch[quota]} is below the team's current use of ${QUOTA_LABELS[quota]} (${result[2]}); free some first, or choose at least ${result[2]}`,
      );
    }
    return (JSON.parse(result[1] as string) as { quotas: Quotas }).quotas;
  }

  /** Forgets a deleted team's ledger. */
  async forget(teamID: string): Promise<void> {
    await this.redis.del(this.k.usage(teamID), this.k.held(teamID));
  }
}
