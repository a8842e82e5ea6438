/** The snapshot and fork endpoints of E2B's API, as its SDK calls them. */
import { z } from 'zod';
import type { Route } from '../http/types';
import { validate } from '../http/validate';
import { DEFAULT_TIMEOUT_SECONDS, listLimitSchema, MAX_TIMEOUT_SECONDS, queryObject } from '../sandboxes/requests';
import type { SandboxService } from '../sandboxes/service';
import { sandboxDetail, type ViewContext } from '../sandboxes/view';
import { forkSandbox } from './fork';
import { snapshotInfo } from './names';
import type { SnapshotService } from './service';
import { callerOf } from '../teams/model';

/** The most forks one call makes (each is a full sandbox on this host). */
export const MAX_FORK_COUNT = 10;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;
const name = z.string().regex(NAME, {
  message: 'expected 1 to 128 letters, digits, ".", "_", "-" or "/", starting with a letter or digit',
});

export const createSnapshotSchema = z.object({ name: name.optional() });

export const forkSchema = z.object({
  timeout: z
    .number()
    .int({ message: 'expected a whole number of seconds' })
    .min(1, { message: `expected 1 to ${MAX_TIMEOUT_SECONDS} seconds` })
    .max(MAX_TIMEOUT_SECONDS, { message: `expected 1 to ${MAX_TIMEOUT_SECONDS} seconds` })
    .default(DEFAULT_TIMEOUT_SECONDS),
  count: z
    .number({ message: `expected a whole number of forks from 1 to ${MAX_FORK_COUNT}` })
    .int({ message: `expected a whole number of forks from 1 to ${MAX_FORK_COUNT}` })
    .min(1, { message: `expected a whole number of forks from 1 to ${MAX_FORK_COUNT}` })
    .max(MAX_FORK_COUNT, { message: `at most ${MAX_FORK_COUNT} forks per call (this platform's quota)` })
    .default(1),
});

export const snapshotListSchema = z.object({
  sandboxID: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  limit: listLimitSchema,
  nextToken: z.string().min(1).optional(),
});

const orEmpty = (body: unknown) => (body === undefined ? {} : body);

export function snapshotRoutes(snapshots: SnapshotService, sandboxes: SandboxService, view: ViewContext, scratchDir: string): Route[] {
  return [
    {
      method: 'POST',
      path: '/sandboxes/:sandboxID/snapshots',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(createSnapshotSchema, orEmpty(req.body), 'body');
        const record = await snapshots.create(req.params.sandboxID, body.name);
        return { status: 201, body: snapshotInfo(record) };
      },
    },
    {
      method: 'GET',
      path: '/snapshots',
      auth: 'api-key',
      handler: async (req) => {
        const query = validate(snapshotListSchema, queryObject(req.query), 'query');
        const { page, nextToken } = await snapshots.list(query, callerOf(req));
        return { status: 200, body: page.map(snapshotInfo), headers: nextToken ? { 'x-next-token': nextToken } : undefined };
      },
    },
    {
      method: 'POST',
      path: '/sandboxes/:sandboxID/fork',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(forkSchema, orEmpty(req.body), 'body');
        const results = await forkSandbox(sandboxes, req.params.sandboxID, body.count, body.timeout, scratchDir);
        return {
          status: 201,
          body: results.map((r) => ('record' in r ? { sandbox: sandboxDetail(r.record, view) } : { error: r.error })),
        };
      },
    },
  ];
}

/** The SDK deletes a snapshot as a template (`DELETE /templates/{id}`): snapshots answer first, templates after. */
export function withSnapshotDeletes(templateRoutes: Route[], snapshots: SnapshotService): Route[] {
  const isDelete = (r: Route) => r.method === 'DELETE' && r.path === '/templates/:templateID';
  const templates = templateRoutes.find(isDelete);
  const route: Route = {
    method: 'DELETE',
    path: '/templates/:templateID',
    auth: 'api-key',
    handler: async (req) => {
      if (await snapshots.delete(req.params.templateID, callerOf(req))) return { status: 204 };
      if (templates) return templates.handler(req);
      return { status: 404, body: { code: 404, message: `template ${JSON.stringify(req.params.templateID)} not found` } };
    },
  };
  return [...templateRoutes.filter((r) => !isDelete(r)), route];
}
