/**
 * The team rules around the sandbox routes, applied once to the whole table instead of in every handler: a call
 * naming another team's sandbox gets exactly the answer an unknown sandbox gets, and a timeout beyond the team's
 * longest is refused before anything happens. (Lists are filtered where they are paged; creates carry the team.)
 */
import { ApiError, type ApiRequest, type Route } from '../http/types';
import { callerOf, mayAct, teamOf } from '../teams/model';
import { DEFAULT_TIMEOUT_SECONDS } from './requests';
import { sandboxNotFound } from './service';

/** The routes whose body asks for a sandbox lifetime, and what they mean when it is left out. */
const TIMEOUT_ROUTES: Record<string, number | undefined> = {
  'POST /v2/sandboxes': DEFAULT_TIMEOUT_SECONDS,
  'POST /v2/sandboxes/:sandboxID/connect': DEFAULT_TIMEOUT_SECONDS,
  'POST /sandboxes/:sandboxID/resume': DEFAULT_TIMEOUT_SECONDS,
  'POST /sandboxes/:sandboxID/timeout': undefined,
  'POST /sandboxes/:sandboxID/fork': DEFAULT_TIMEOUT_SECONDS,
};

/** 429 when the body asks for longer than the team's longest sandbox timeout. */
export function checkTimeoutQuota(route: Pick<Route, 'method' | 'path'>, req: ApiRequest): void {
  const key = `${route.method} ${route.path}`;
  if (!(key in TIMEOUT_ROUTES)) return;
  const limit = callerOf(req).quotas.maxTimeoutSeconds;
  if (limit === undefined || limit === null) return;
  const given = (req.body as { timeout?: unknown } | undefined)?.timeout;
  const asked = typeof given === 'number' ? given : TIMEOUT_ROUTES[key];
  if (asked !== undefined && asked > limit)
    throw new ApiError(
      429,
      `quota exceeded: the longest sandbox timeout (maxTimeoutSeconds) is ${limit} seconds for this team; ${asked} seconds were asked for; nothing was changed`,
    );
}

/**
 * Wraps the sandbox routes: `owner(id)` tells the team of a sandbox this host knows (undefined: unknown here, and
 * the handler answers as it always does).
 */
export function teamScopedSandboxRoutes(
  routes: readonly Route[],
  owner: (sandboxID: string) => Promise<{ teamID?: string } | undefined>,
): Route[] {
  return routes.map((route) => ({
    ...route,
    handler: async (req) => {
      const caller = callerOf(req);
      const id = req.params.sandboxID;
      if (id !== undefined) {
        const record = await owner(id);
        if (record && !mayAct(caller, teamOf(record))) throw sandboxNotFound(id);
      }
      checkTimeoutQuota(route, req);
      return route.handler(req);
    },
  }));
}
