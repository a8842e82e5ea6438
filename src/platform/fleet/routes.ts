/**
 * The sandbox API of a fleet host: any host answers any call (the load balancer picks one), and passes on what is
 * another host's. A create goes to the least-loaded live host that has the template (placement.ts); a call naming a
 * sandbox goes to the host the catalog says holds it; a list is every host's page merged in the list's own order.
 * A call passed on carries FORWARDED_HEADER and is always answered where it arrives, so nothing travels twice.
 */
import type { Catalog } from '../../catalog/types';
import { API_KEY_HEADER } from '../http/server';
import { chooseHost } from './placement';
import { compareListed, decodeCursor, encodeCursor } from '../sandboxes/list';
import { listQuerySchema, queryObject } from '../sandboxes/requests';
import { CREATE_PATHS, LEGACY_LIST_PATH, LIST_PATH } from '../sandboxes/routes';
import { ApiError, type ApiRequest, type ApiResponse, type Route } from '../http/types';
import { validate } from '../http/validate';
import type { FleetHost } from './registry';

export const FORWARDED_HEADER = 'x-sandbox-kit-forwarded';
/** How long a host may take to answer a call passed on (a create waits for the sandbox to be ready). */
const FORWARD_TIMEOUT_MS = 120_000;

export interface FleetRouting {
  hostID: string;
  hosts(): Promise<FleetHost[]>;
  catalog: Catalog;
  /** After a create or a removal here: tell the fleet the new count now. */
  changed(): void;
}

type Decision = { kind: 'local' } | { kind: 'forward'; host: FleetHost } | { kind: 'refuse'; status: number; message: string };

/** Where a create goes: pure, from the live hosts and the template asked for. */
export function placeCreate(hosts: readonly FleetHost[], self: string, template: string): Decision {
  if (hosts.length === 0) return { kind: 'local' };
  const able = hosts.filter((h) => h.templates.includes(template));
  // No host can start it: answered here, which says so as a single host would (404 template not found).
  if (able.length === 0) return { kind: 'local' };
  const choice = chooseHost(able, new Map(able.map((h) => [h.hostID, h.sandboxes])));
  if (!choice.ok) return { kind: 'refuse', status: 503, message: `no sandbox host can take a sandbox of ${template}: ${choice.reason}` };
  if (choice.hostID === self) return { kind: 'local' };
  return { kind: 'forward', host: able.find((h) => h.hostID === choice.hostID) as FleetHost };
}

/** Where a call about one sandbox goes: pure, from its catalog entry's host and the live hosts. */
export function routeBySandbox(holder: string | undefined, hosts: readonly FleetHost[], self: string, sandboxID: string): Decision {
  if (holder === undefined || holder === self) return { kind: 'local' };
  const host = hosts.find((h) => h.hostID === holder);
  if (!host)
    return { kind: 'refuse', status: 502, message: `sandbox ${JSON.stringify(sandboxID)} is on host ${holder}, which is not answering` };
  return { kind: 'forward', host };
}

interface Listed {
  sandboxID: string;
  startedAt: string;
}

/** Merges the hosts' pages of one list query into the page a single host would give, with its next token. */
export function mergePages(
  pages: ReadonlyArray<{ items: Listed[]; more: boolean }>,
  limit: number,
  order: 'asc' | 'desc',
): { page: Listed[]; nextToken?: string } {
  const direction = order === 'asc' ? 1 : -1;
  const all = pages.flatMap((p) => p.items).sort((a, b) => direction * compareListed(a, b));
  const page = all.slice(0, limit);
  const more = all.length > page.length || pages.some((p) => p.more);
  const last = page.at(-1);
  return more && last ? { page, nextToken: encodeCursor(last) } : { page };
}

/** Passes the call on to `host`'s API with the caller's key; its answer becomes this one. */
async function forward(host: FleetHost, req: ApiRequest, self: string): Promise<ApiResponse> {
  const headers: Record<string, string> = { [FORWARDED_HEADER]: self };
  const key = req.raw.headers[API_KEY_HEADER];
  if (typeof key === 'string') headers[API_KEY_HEADER] = key;
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(new URL(req.raw.url ?? '/', host.apiUrl), {
      method: req.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new ApiError(502, `sandbox host ${host.hostID} (${host.apiUrl}) did not answer: ${cause}`);
  }
  const text = await res.text();
  let body: unknown;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError(502, `sandbox host ${host.hostID} answered ${res.status} with a body that is not JSON`);
    }
  }
  const next = res.headers.get('x-next-token');
  return { status: res.status, ...(body !== undefined ? { body } : {}), ...(next ? { headers: { 'x-next-token': next } } : {}) };
}

const forwarded = (req: ApiRequest) => req.raw.headers[FORWARDED_HEADER] !== undefined;

function act(decision: Decision, req: ApiRequest, self: string, local: () => Promise<ApiResponse>): Promise<ApiResponse> {
  if (decision.kind === 'local') return local();
  if (decision.kind === 'refuse') throw new ApiError(decision.status, decision.message);
  return forward(decision.host, req, self);
}

/** The sandbox routes of one host, made fleet-wide. Other routes (templates) stay this host's own. */
export function fleetRoutes(routes: readonly Route[], fleet: FleetRouting): Route[] {
  return routes.map((route) => {
    const local = route.handler;
    const counted = async (req: ApiRequest): Promise<ApiResponse> => {
      const res = await local(req);
      if (route.method === 'POST' || route.method === 'DELETE') fleet.changed();
      return res;
    };
    if (route.method === 'POST' && CREATE_PATHS.includes(route.path)) {
      return {
        ...route,
        handler: async (req) => {
          if (forwarded(req)) return counted(req);
          const template = (req.body as { templateID?: unknown } | undefined)?.templateID;
          // A request without a template is answered here: the handler says what is wrong with it.
          if (typeof template !== 'string') return counted(req);
          return act(placeCreate(await fleet.hosts(), fleet.hostID, template), req, fleet.hostID, () => counted(req));
        },
      };
    }
    if (route.method === 'GET' && route.path === LEGACY_LIST_PATH) {
      return {
        ...route,
        handler: async (req) => {
          if (forwarded(req)) return local(req);
          const others = (await fleet.hosts()).filter((h) => h.hostID !== fleet.hostID);
          const answers = await Promise.all([local(req), ...others.map((h) => forward(h, req, fleet.hostID))]);
          const items = answers.flatMap((a) => {
            if (a.status !== 200 || !Array.isArray(a.body)) throw new ApiError(502, `a sandbox host answered the list with ${a.status}`);
            return a.body as Listed[];
          });
          return { status: 200, body: items.sort(compareListed) };
        },
      };
    }
    if (route.method === 'GET' && route.path === LIST_PATH) {
      return {
        ...route,
        handler: async (req) => {
          if (forwarded(req)) return local(req);
          const query = validate(listQuerySchema, queryObject(req.query), 'query');
          if (query.nextToken !== undefined) decodeCursor(query.nextToken);
          const others = (await fleet.hosts()).filter((h) => h.hostID !== fleet.hostID);
          const answers = await Promise.all([local(req), ...others.map((h) => forward(h, req, fleet.hostID))]);
          const pages = answers.map((a) => {
            if (a.status !== 200 || !Array.isArray(a.body)) throw new ApiError(502, `a sandbox host answered the list with ${a.status}`);
            return { items: a.body as Listed[], more: a.headers?.['x-next-token'] !== undefined };
          });
          const { page, nextToken } = mergePages(pages, query.limit, query.order ?? 'desc');
          return { status: 200, body: page, ...(nextToken ? { headers: { 'x-next-token': nextToken } } : {}) };
        },
      };
    }
    if (route.path.includes(':sandboxID')) {
      return {
        ...route,
        handler: async (req) => {
          if (forwarded(req)) return counted(req);
          const id = req.params.sandboxID as string;
          const entry = await fleet.catalog.get(id);
          return act(routeBySandbox(entry?.hostID, await fleet.hosts(), fleet.hostID, id), req, fleet.hostID, () => counted(req));
        },
      };
    }
    return route;
  });
}
