/** `GET /sandboxes/{id}/metrics` and `GET /sandboxes/metrics`, as the E2B SDK and CLI read them. */
import { z } from 'zod';
import type { Route } from '../http/types';
import { validate } from '../http/validate';
import { queryObject } from './requests';
import { callerOf, mayAct, teamOf } from '../teams/model';
import type { SandboxService } from './service';
import type { SandboxMetric, UsageSampler } from './usage-sampler';

/** Most sandboxes one list call may ask for. */
export const MAX_METRICS_IDS = 100;

const unixSeconds = z
  .string()
  .regex(/^[0-9]{1,12}$/, { message: 'expected a unix time in whole seconds' })
  .transform(Number);

const seriesQuery = z.object({ start: unixSeconds.optional(), end: unixSeconds.optional() });

const listQuery = z.object({
  // `a,b` or `sandbox_ids=a&sandbox_ids=b`: both reach here.
  sandbox_ids: z
    .union([z.string(), z.array(z.string())], { message: 'expected sandbox IDs, comma-separated' })
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).filter((s) => s !== ''))
    .pipe(
      z
        .array(z.string())
        .min(1, { message: 'expected at least one sandbox ID' })
        .max(MAX_METRICS_IDS, { message: `expected at most ${MAX_METRICS_IDS} sandbox IDs` }),
    ),
});

export function metricsRoutes(service: SandboxService, sampler: UsageSampler): Route[] {
  return [
    {
      method: 'GET',
      path: '/sandboxes/metrics',
      auth: 'api-key',
      handler: async (req) => {
        const { sandbox_ids } = validate(listQuery, queryObject(req.query), 'query');
        const caller = callerOf(req);
        // Another team's sandbox is left out, as an unknown one is.
        const known = new Set(
          (await service.all()).filter((r) => r.state !== 'creating' && mayAct(caller, teamOf(r))).map((r) => r.sandboxID),
        );
        const sandboxes: Record<string, SandboxMetric> = {};
        for (const id of sandbox_ids) {
          const latest = known.has(id) ? sampler.latest(id) : undefined;
          if (latest) sandboxes[id] = latest;
        }
        return { status: 200, body: { sandboxes } };
      },
    },
    {
      method: 'GET',
      path: '/sandboxes/:sandboxID/metrics',
      auth: 'api-key',
      handler: async (req) => {
        const query = validate(seriesQuery, queryObject(req.query), 'query');
        await service.get(req.params.sandboxID as string);
        return { status: 200, body: sampler.samples(req.params.sandboxID as string, query.start, query.end) };
      },
    },
  ];
}
