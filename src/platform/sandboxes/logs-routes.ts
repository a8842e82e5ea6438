/** `GET /sandboxes/{id}/logs` (v1, what `e2b sandbox logs` reads) and `GET /v2/sandboxes/{id}/logs`. */
import { z } from 'zod';
import type { Route } from '../http/types';
import { validate } from '../http/validate';
import { LOG_LEVELS, MAX_LOG_ENTRIES, selectLogs, v1Line, type SandboxLogLevel } from './logs';
import { queryObject } from './requests';
import type { SandboxService } from './service';

const limit = z
  .string()
  .regex(/^[0-9]{1,5}$/, { message: `expected a whole number from 1 to ${MAX_LOG_ENTRIES}` })
  .transform(Number)
  .pipe(
    z
      .number()
      .min(1, { message: `expected a whole number from 1 to ${MAX_LOG_ENTRIES}` })
      .max(MAX_LOG_ENTRIES),
  );

const epochMs = z
  .string()
  .regex(/^[0-9]{1,15}$/, { message: 'expected a time in milliseconds since the epoch' })
  .transform(Number);

const v1Query = z.object({ start: epochMs.optional(), limit: limit.optional() });

const v2Query = z.object({
  cursor: epochMs.optional(),
  direction: z.enum(['forward', 'backward'], { message: 'expected forward or backward' }).optional(),
  level: z.enum(LOG_LEVELS as [SandboxLogLevel, ...SandboxLogLevel[]], { message: `expected one of ${LOG_LEVELS.join(', ')}` }).optional(),
  limit: limit.optional(),
  search: z.string().optional(),
});

export function logsRoutes(service: SandboxService): Route[] {
  return [
    {
      method: 'GET',
      path: '/sandboxes/:sandboxID/logs',
      auth: 'api-key',
      handler: async (req) => {
        const q = validate(v1Query, queryObject(req.query), 'query');
        const entries = selectLogs(await service.logs(req.params.sandboxID as string), {
          fromMs: q.start,
          direction: 'forward',
          limit: q.limit ?? MAX_LOG_ENTRIES,
        });
        return { status: 200, body: { logs: entries.map(v1Line), logEntries: entries } };
      },
    },
    {
      method: 'GET',
      path: '/v2/sandboxes/:sandboxID/logs',
      auth: 'api-key',
      handler: async (req) => {
        const q = validate(v2Query, queryObject(req.query), 'query');
        const logs = selectLogs(await service.logs(req.params.sandboxID as string), {
          fromMs: q.cursor,
          direction: q.direction ?? 'forward',
          limit: q.limit ?? MAX_LOG_ENTRIES,
          minLevel: q.level,
          search: q.search,
        });
        return { status: 200, body: { logs } };
      },
    },
  ];
}
