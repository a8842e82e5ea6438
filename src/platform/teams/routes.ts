/**
 * The teams' endpoints. E2B's own (`GET /teams`, `/teams/{teamID}/metrics`, `/metrics/max`), answered for the
 * caller's team; and the administration under /admin (teams, quotas, keys, the audit trail), for admin keys only,
 * which `sandbox-kit team|key|audit` call.
 */
import { z } from 'zod';
import { ApiError, type ApiRequest, type Route } from '../http/types';
import { validate } from '../http/validate';
import type { AuditLog } from './audit';
import { type MaxMetric, maximum, series, type TeamMetrics } from './metrics';
import { DEFAULT_TEAM_ID, mayAct, nameSchema, quotaSchema, type Team } from './model';
import type { QuotaLedger } from './quotas';
import { callerOf } from './model';
import type { TeamStore } from './store';

export interface TeamServices {
  store: TeamStore;
  ledger: QuotaLedger;
  audit: AuditLog;
  metrics: TeamMetrics;
  /** What a team still has that deleting it would orphan (e.g. "2 templates"), or undefined when nothing. */
  holdings(teamID: string): Promise<string | undefined>;
  /**
   * Deletes what goes with a deleted team rather than holding its delete back (its secrets): called before the team
   * is deleted, so a failure leaves the team for another try, and once more after, for a create that was under way.
   */
  removeWith?(teamID: string): Promise<void>;
  /** Brings what the ledger holds for the team's stored bytes up to date before it is shown (volumes written from sandboxes). */
  measure?(teamID: string): Promise<void>;
}

const createTeamBody = z.object({ name: nameSchema, quotas: quotaSchema.default({}) }).strict();
const quotasBody = z.object({ quotas: quotaSchema }).strict();
const createKeyBody = z
  .object({
    team: z
      .string({ message: 'expected the team ID or name the key is for' })
      .min(1, { message: 'expected the team ID or name the key is for' }),
    name: nameSchema,
    admin: z.boolean({ message: 'expected true or false' }).default(false),
  })
  .strict();

const seconds = z
  .string()
  .regex(/^\d{1,12}$/, { message: 'expected Unix time in whole seconds' })
  .transform(Number)
  .optional();
const intervalQuery = z.object({ start: seconds, end: seconds });
const maxQuery = intervalQuery.extend({
  metric: z.enum(['concurrent_sandboxes', 'sandbox_start_rate'], { message: 'expected concurrent_sandboxes or sandbox_start_rate' }),
});
const auditQuery = z
  .object({
    team: z.string().optional(),
    action: z.string().optional(),
    since: seconds,
    limit: z
      .string()
      .regex(/^\d{1,6}$/, { message: 'expected a whole number from 1 to 100000' })
      .transform(Number)
      .refine((n) => n >= 1 && n <= 100_000, { message: 'expected a whole number from 1 to 100000' })
      .optional(),
  })
  .strict();

const query = (req: ApiRequest) => Object.fromEntries(req.query.entries());

/** The team named in a metrics path, as the caller may see it: another team's is as unknown as a missing one. */
async function visibleTeam(s: TeamServices, req: ApiRequest): Promise<Team> {
  const teamID = req.params.teamID as string;
  const team = mayAct(callerOf(req), teamID) ? await s.store.team(teamID) : undefined;
  if (!team) throw new ApiError(404, `team ${JSON.stringify(teamID)} not found`);
  return team;
}

function interval(q: { start?: number; end?: number }): { startMs: number; endMs: number } {
  const endMs = q.end !== undefined ? q.end * 1000 : Date.now();
  const startMs = q.start !== undefined ? q.start * 1000 : endMs - 3600_000;
  if (startMs > endMs) throw new ApiError(400, `query field "start": must not be after "end" (given start ${q.start}, end ${q.end})`);
  return { startMs, endMs };
}

async function teamView(s: TeamServices, team: Team) {
  await s.measure?.(team.teamID);
  return { ...team, usage: await s.ledger.usage(team.teamID) };
}

export function teamRoutes(s: TeamServices): Route[] {
  return [
    {
      method: 'GET',
      path: '/teams',
      auth: 'api-key',
      handler: async (req) => {
        const caller = callerOf(req);
        const team = await s.store.team(caller.teamID);
        if (!team) throw new ApiError(401, 'the X-API-Key header holds no valid API key (its team was deleted)');
        // The caller's own key is the only plain key the platform can give: it keeps no others.
        return { status: 200, body: [{ teamID: team.teamID, name: team.name, apiKey: caller.presentedKey, isDefault: true }] };
      },
    },
    {
      method: 'GET',
      path: '/teams/:teamID/metrics',
      auth: 'api-key',
      handler: async (req) => {
        const team = await visibleTeam(s, req);
        const { startMs, endMs } = interval(validate(intervalQuery, query(req), 'query'));
        return { status: 200, body: series(await s.metrics.samples(team.teamID, startMs, endMs), startMs, endMs) };
      },
    },
    {
      method: 'GET',
      path: '/teams/:teamID/metrics/max',
      auth: 'api-key',
      handler: async (req) => {
        const team = await visibleTeam(s, req);
        const q = validate(maxQuery, query(req), 'query');
        const { startMs, endMs } = interval(q);
        return { status: 200, body: maximum(await s.metrics.samples(team.teamID, startMs, endMs), q.metric as MaxMetric, startMs, endMs) };
      },
    },
    {
      method: 'GET',
      path: '/admin/teams',
      auth: 'admin',
      handler: async () => ({ status: 200, body: await Promise.all((await s.store.teams()).map((t) => teamView(s, t))) }),
    },
    {
      method: 'POST',
      path: '/admin/teams',
      auth: 'admin',
      handler: async (req) => {
        const body = validate(createTeamBody, req.body ?? {}, 'body');
        return { status: 201, body: await teamView(s, await s.store.createTeam(body.name, body.quotas)) };
      },
    },
    {
      method: 'PUT',
      path: '/admin/teams/:team/quotas',
      auth: 'admin',
      handler: async (req) => {
        const body = validate(quotasBody, req.body ?? {}, 'body');
        const team = await s.store.findTeam(req.params.team as string);
        const quotas = await s.ledger.setQuotas(team.teamID, body.quotas);
        return { status: 200, body: await teamView(s, { ...team, quotas }) };
      },
    },
    {
      method: 'DELETE',
      path: '/admin/teams/:team',
      auth: 'admin',
      handler: async (req) => {
        const team = await s.store.findTeam(req.params.team as string);
        if (team.teamID === DEFAULT_TEAM_ID)
          throw new ApiError(400, 'the default team cannot be deleted: the key file’s keys belong to it');
        const holds = await s.holdings(team.teamID);
        if (holds !== undefined)
          throw new ApiError(409, `team ${team.name} still has ${holds}; kill and delete them first (nothing was deleted)`);
        await s.removeWith?.(team.teamID);
        await s.store.deleteTeam(team);
        await s.removeWith?.(team.teamID);
        await s.ledger.forget(team.teamID);
        await s.metrics.forget(team.teamID);
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/admin/keys',
      auth: 'admin',
      handler: async (req) => {
        const teamName = req.query.get('team');
        const team = teamName ? await s.store.findTeam(teamName) : undefined;
        const keys = (await s.store.keys()).map((k) => k.record).filter((k) => !team || k.teamID === team.teamID);
        return { status: 200, body: keys };
      },
    },
    {
      method: 'POST',
      path: '/admin/keys',
      auth: 'admin',
      handler: async (req) => {
        const body = validate(createKeyBody, req.body ?? {}, 'body');
        const team = await s.store.findTeam(body.team);
        const { key, record } = await s.store.createKey(team.teamID, body.name, body.admin ? 'admin' : 'member');
        return { status: 201, body: { ...record, key } };
      },
    },
    {
      method: 'DELETE',
      path: '/admin/keys/:keyID',
      auth: 'admin',
      handler: async (req) => {
        const keyID = req.params.keyID as string;
        if (!(await s.store.revokeKey(keyID)))
          throw new ApiError(
            404,
            `key ${JSON.stringify(keyID)} not found (already revoked, or never made; sandbox-kit key list shows the keys)`,
          );
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/admin/audit',
      auth: 'admin',
      handler: async (req) => {
        const q = validate(auditQuery, query(req), 'query');
        const team = q.team !== undefined ? await s.store.findTeam(q.team) : undefined;
        const entries = await s.audit.query({
          ...(team ? { teamID: team.teamID } : {}),
          ...(q.action !== undefined ? { action: q.action } : {}),
          ...(q.since !== undefined ? { sinceMs: q.since * 1000 } : {}),
          ...(q.limit !== undefined ? { limit: q.limit } : {}),
        });
        return { status: 200, body: entries };
      },
    },
  ];
}
