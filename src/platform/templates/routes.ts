/**
 * The template endpoints the E2B SDK calls, as a route table the platform's server mounts. Paths, fields and status
 * codes follow what `Template.build`, `Template.exists` and the template list expect.
 */
import { callerOf } from '../teams/model';
import { ApiError, type ApiRequest, type ApiResponse, type Route } from '../http/types';
import type { TemplateService } from './service';
import { z } from 'zod';
import { assignTagsBody, describeIssues, createTemplateBody, removeTagsBody, startBuildBody } from './wire';

const updateTemplateBody = z.object({ public: z.boolean({ message: 'expected true or false' }).optional() });

/** The SDK reads at most this many entries per status poll and asks again until a page comes back empty. */
export const LOG_PAGE_LIMIT = 100;

function parse<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: import('zod').ZodError } },
  body: unknown,
  what: string,
): T {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw new ApiError(400, `${what}: ${describeIssues(result.error, body)}`);
  return result.data;
}

function offsetOf(req: ApiRequest): number {
  const raw = req.query.get('logsOffset');
  if (raw === null || raw === '') return 0;
  if (!/^\d+$/.test(raw)) throw new ApiError(400, `logsOffset: expected a non-negative integer (given: ${JSON.stringify(raw)})`);
  return Number(raw);
}

export function templateRoutes(service: TemplateService): Route[] {
  return [
    {
      method: 'POST',
      path: '/v3/templates',
      auth: 'api-key',
      async handler(req): Promise<ApiResponse> {
        const body = parse(createTemplateBody, req.body, 'POST /v3/templates');
        const name = body.name ?? body.alias;
        if (name === undefined) throw new ApiError(400, 'POST /v3/templates: name: expected a template name (given: nothing)');
        return { status: 202, body: await service.requestBuild({ ...body, name }, callerOf(req)) };
      },
    },
    // Before /templates/:templateID, which would otherwise take DELETE /templates/tags.
    {
      method: 'POST',
      path: '/templates/tags',
      auth: 'api-key',
      async handler(req) {
        const body = parse(assignTagsBody, req.body, 'POST /templates/tags');
        return { status: 201, body: await service.assignTags(body.target, body.tags, callerOf(req)) };
      },
    },
    {
      method: 'DELETE',
      path: '/templates/tags',
      auth: 'api-key',
      async handler(req) {
        const body = parse(removeTagsBody, req.body, 'DELETE /templates/tags');
        await service.removeTags(body.name, body.tags, callerOf(req));
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/templates/:templateID/tags',
      auth: 'api-key',
      async handler(req) {
        return { status: 200, body: await service.tagsOf(req.params.templateID!, callerOf(req)) };
      },
    },
    {
      method: 'GET',
      path: '/templates/:templateID/files/:hash',
      auth: 'api-key',
      async handler(req) {
        return { status: 201, body: await service.fileUploadLink(req.params.templateID!, req.params.hash!, req, callerOf(req)) };
      },
    },
    {
      method: 'PUT',
      path: '/templates/:templateID/files/:hash/upload',
      auth: 'none',
      rawBody: true,
      async handler(req) {
        try {
          await service.receiveUpload(req.params.templateID!, req.params.hash!, req);
        } catch (err) {
          // The SDK shows an upload's refusal by its status line alone: the reason phrase carries the message.
          if (err instanceof ApiError) return { status: err.code, body: { code: err.code, message: err.message }, reason: err.message };
          throw err;
        }
        return { status: 201 };
      },
    },
    {
      method: 'POST',
      path: '/v2/templates/:templateID/builds/:buildID',
      auth: 'api-key',
      async handler(req) {
        const body = parse(startBuildBody, req.body, 'POST /v2/templates/{templateID}/builds/{buildID}');
        await service.startBuild(req.params.templateID!, req.params.buildID!, body, callerOf(req));
        return { status: 202 };
      },
    },
    {
      method: 'GET',
      path: '/templates/:templateID/builds/:buildID/status',
      auth: 'api-key',
      async handler(req) {
        return {
          status: 200,
          body: await service.buildStatus(req.params.templateID!, req.params.buildID!, offsetOf(req), LOG_PAGE_LIMIT, callerOf(req)),
        };
      },
    },
    {
      method: 'GET',
      path: '/templates',
      auth: 'api-key',
      async handler(req) {
        return { status: 200, body: await service.list(callerOf(req), req.query.get('teamID') ?? undefined) };
      },
    },
    {
      method: 'PATCH',
      path: '/v2/templates/:templateID',
      auth: 'api-key',
      async handler(req) {
        const body = parse(updateTemplateBody, req.body, 'PATCH /v2/templates/{templateID}');
        return { status: 200, body: await service.update(req.params.templateID!, body.public, callerOf(req)) };
      },
    },
    {
      method: 'GET',
      path: '/templates/aliases/:alias',
      auth: 'api-key',
      async handler(req) {
        return { status: 200, body: await service.aliasInfo(req.params.alias!, callerOf(req)) };
      },
    },
    {
      method: 'DELETE',
      path: '/templates/:templateID',
      auth: 'api-key',
      async handler(req) {
        await service.delete(req.params.templateID!, callerOf(req));
        return { status: 204 };
      },
    },
  ];
}
