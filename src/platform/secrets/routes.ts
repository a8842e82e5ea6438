/** The secret endpoints of E2B's API (`/secrets`), as its SDK's `Secret` class calls them; each team's own. */
import { z } from 'zod';
import type { Route } from '../http/types';
import { validate } from '../http/validate';
import { listLimitSchema, queryObject } from '../sandboxes/requests';
import { callerOf } from '../teams/model';
import { newSecretSchema, secretUpdateSchema, secretValueOf } from './requests';
import { secretNotFound, type SecretService } from './service';
import { secretInfo } from './view';

/** A page holds this many secrets when the caller names no limit. */
export const DEFAULT_SECRET_PAGE = 100;

const listQuerySchema = z.object({
  limit: listLimitSchema.optional(),
  nextToken: z.string().min(1).optional(),
});

export function secretRoutes(secrets: SecretService): Route[] {
  return [
    {
      method: 'POST',
      path: '/secrets',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(newSecretSchema, req.body ?? {}, 'body');
        const value = secretValueOf(body.value);
        const record = await secrets.create(body.name, value, body.metadata ?? undefined, callerOf(req).teamID);
        return { status: 201, body: secretInfo(record) };
      },
    },
    {
      method: 'GET',
      path: '/secrets',
      auth: 'api-key',
      handler: async (req) => {
        const query = validate(listQuerySchema, queryObject(req.query), 'query');
        const { page, nextToken } = await secrets.list(callerOf(req), query.limit ?? DEFAULT_SECRET_PAGE, query.nextToken);
        return { status: 200, body: page.map(secretInfo), headers: nextToken ? { 'x-next-token': nextToken } : undefined };
      },
    },
    {
      method: 'GET',
      path: '/secrets/:secretID',
      auth: 'api-key',
      handler: async (req) => ({ status: 200, body: secretInfo(await secrets.get(req.params.secretID, callerOf(req))) }),
    },
    {
      method: 'POST',
      path: '/secrets/:secretID',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(secretUpdateSchema, req.body ?? {}, 'body');
        const value = secretValueOf(body.value);
        const record = await secrets.update(req.params.secretID, value, body.metadata ?? undefined, callerOf(req));
        return { status: 200, body: secretInfo(record) };
      },
    },
    {
      method: 'DELETE',
      path: '/secrets/:secretID',
      auth: 'api-key',
      handler: async (req) => {
        if (!(await secrets.destroy(req.params.secretID, callerOf(req)))) throw secretNotFound(req.params.secretID);
        return { status: 204 };
      },
    },
  ];
}
