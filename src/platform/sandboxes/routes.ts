/** The sandbox endpoints of E2B's API, as its SDK calls them, mapped onto the SandboxService. */
import { checkSandboxMcp } from './mcp-check';
import { listAllSandboxes, listSandboxes } from './list';
import {
  networkUpdateSchema,
  connectSchema,
  legacyListQuerySchema,
  listQuerySchema,
  newSandboxSchema,
  pauseSchema,
  queryObject,
  resumeSchema,
  setTimeoutSchema,
} from './requests';
import type { SandboxService } from './service';
import { listedSandbox, sandboxDetail, type ViewContext } from './view';
import type { Route } from '../http/types';
import { validate } from '../http/validate';
import { mayAct, teamOf } from '../teams/model';
import { callerOf } from '../teams/model';

/** Create, by SDK line: `/v2/` from 2.51 on, the same body without it before (1.x included). */
export const CREATE_PATHS: readonly string[] = ['/v2/sandboxes', '/sandboxes'];
/** The v2 list (paged) and the 1.x list (every running sandbox in one array). */
export const LIST_PATH = '/v2/sandboxes';
export const LEGACY_LIST_PATH = '/sandboxes';

/** A body that is absent is `{}`; anything else must be an object (validated by its schema). */
const orEmpty = (body: unknown) => (body === undefined ? {} : body);

export function sandboxRoutes(service: SandboxService, view: ViewContext): Route[] {
  const create: Route['handler'] = async (req) => {
    const body = validate(newSandboxSchema, req.body, 'body');
    // Checked before anything is made; the SDK itself then runs mcp-gateway in the sandbox.
    checkSandboxMcp(body.mcp);
    const record = await service.create(body, callerOf(req).teamID);
    return { status: 201, body: sandboxDetail(record, view) };
  };
  const connect: Route['handler'] = async (req) => {
    const body = validate(connectSchema, orEmpty(req.body), 'body');
    const { record, resumed } = await service.connect(req.params.sandboxID, body.timeout, { reboot: body.memory === false });
    return { status: resumed ? 201 : 200, body: sandboxDetail(record, view) };
  };
  return [
    ...CREATE_PATHS.map((path): Route => ({ method: 'POST', path, auth: 'api-key', handler: create })),
    {
      method: 'GET',
      path: LIST_PATH,
      auth: 'api-key',
      handler: async (req) => {
        const query = validate(listQuerySchema, queryObject(req.query), 'query');
        const caller = callerOf(req);
        const mine = (await service.all()).filter((r) => mayAct(caller, teamOf(r)));
        const { page, nextToken } = listSandboxes(mine, query);
        return {
          status: 200,
          body: page.map((r) => listedSandbox(r, view)),
          headers: nextToken ? { 'x-next-token': nextToken } : undefined,
        };
      },
    },
    {
      method: 'GET',
      path: LEGACY_LIST_PATH,
      auth: 'api-key',
      handler: async (req) => {
        const query = validate(legacyListQuerySchema, queryObject(req.query), 'query');
        const caller = callerOf(req);
        const mine = (await service.all()).filter((r) => mayAct(caller, teamOf(r)));
        const running = listAllSandboxes(mine, { state: ['running'], metadata: query.metadata });
        return { status: 200, body: running.map((r) => listedSandbox(r, view)) };
      },
    },
    {
      method: 'GET',
      path: '/sandboxes/:sandboxID',
      auth: 'api-key',
      handler: async (req) => ({ status: 200, body: sandboxDetail(await service.get(req.params.sandboxID), view) }),
    },
    // Connect (resumes a paused sandbox): `/v2/` from 2.51 on, without it from 2.10 to 2.50; 1.x has no connect call.
    ...['/v2/sandboxes/:sandboxID/connect', '/sandboxes/:sandboxID/connect'].map(
      (path): Route => ({ method: 'POST', path, auth: 'api-key', handler: connect }),
    ),
    {
      // The older resume call: only a paused sandbox (409 otherwise). The gateway's auto-resume uses it.
      method: 'POST',
      path: '/sandboxes/:sandboxID/resume',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(resumeSchema, orEmpty(req.body), 'body');
        const { record } = await service.connect(req.params.sandboxID, body.timeout, {
          mustBePaused: true,
          autoPause: body.autoPause,
          reboot: body.memory === false,
        });
        return { status: 201, body: sandboxDetail(record, view) };
      },
    },
    {
      method: 'POST',
      path: '/sandboxes/:sandboxID/pause',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(pauseSchema, orEmpty(req.body), 'body');
        await service.pause(req.params.sandboxID, body.memory === false ? 'disk' : 'memory');
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/sandboxes/:sandboxID/timeout',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(setTimeoutSchema, req.body, 'body');
        await service.setTimeout(req.params.sandboxID, body.timeout);
        return { status: 204 };
      },
    },
    {
      // Replaces the sandbox's egress rules (Sandbox.updateNetwork); what the body leaves out is cleared.
      method: 'PUT',
      path: '/sandboxes/:sandboxID/network',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(networkUpdateSchema, orEmpty(req.body), 'body');
        await service.updateNetwork(req.params.sandboxID, body);
        return { status: 204 };
      },
    },
    {
      method: 'DELETE',
      path: '/sandboxes/:sandboxID',
      auth: 'api-key',
      handler: async (req) => {
        await service.kill(req.params.sandboxID);
        return { status: 204 };
      },
    },
  ];
}
