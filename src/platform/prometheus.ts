/**
 * The platform's Prometheus metrics (prom-client, one registry per platform): sandboxes by state and template
 * (counted from the store at scrape time), how long creates, resumes and pauses take and each of their phases,
 * template builds by outcome and their durations, what each team holds of its quotas, and each warm pool's
 * sandboxes, takes, misses and evictions. Served at `GET /metrics` with an admin API key (`X-API-Key`, or
 * `Authorization: Bearer <key>` as Prometheus sends `authorization.credentials`).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Route } from './http/types';
import type { SandboxObserver, TimedOperation } from './sandboxes/service';
import type { PoolStats } from './sandboxes/warm-pool';

/** Seconds: a create is tens of milliseconds to a minute (a slow ready command); a phase can be under a millisecond. */
const OPERATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const BUILD_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600];

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface CountedSandbox {
  state: string;
  templateID: string;
  alias?: string;
}

/** One team's held quotas now, and its limits (null or absent: none). */
export interface TeamQuotaUse {
  team: string;
  used: Record<string, number>;
  limits: Record<string, number | null | undefined>;
}

export class PlatformMetrics implements SandboxObserver {
  readonly registry = new Registry();
  private readonly operations: Histogram<'operation' | 'outcome'>;
  private readonly phases: Histogram<'operation' | 'phase'>;
  private readonly builds: Counter<'outcome'>;
  private readonly buildSeconds: Histogram<'outcome'>;

  constructor(
    sandboxes: () => Promise<CountedSandbox[]>,
    teams: () => Promise<TeamQuotaUse[]> = async () => [],
    pools: () => Record<string, PoolStats> = () => ({}),
  ) {
    new Gauge({
      name: 'sandboxkit_sandboxes',
      help: 'Sandboxes of this platform by state and template (name, or ID when it has none).',
      labelNames: ['state', 'template'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const s of await sandboxes()) this.inc({ state: s.state, template: s.alias ?? s.templateID });
      },
    });
    new Gauge({
      name: 'sandboxkit_team_quota_used',
      help: 'What each team holds of its quotas now (sandboxes, vcpus, memoryMiB, builds, templateBytes).',
      labelNames: ['team', 'quota'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const t of await teams()) for (const [quota, value] of Object.entries(t.used)) this.set({ team: t.team, quota }, value);
      },
    });
    new Gauge({
      name: 'sandboxkit_team_quota_limit',
      help: "Each team's quota limits (a quota without a limit is not listed).",
      labelNames: ['team', 'quota'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const t of await teams())
          for (const [quota, value] of Object.entries(t.limits)) if (typeof value === 'number') this.set({ team: t.team, quota }, value);
      },
    });
    new Gauge({
      name: 'sandboxkit_warm_pool_sandboxes',
      help: "Each warm pool's sandboxes by state: ready (waiting for a create) or starting (being filled).",
      labelNames: ['template', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [template, s] of Object.entries(pools())) {
          this.set({ template, state: 'ready' }, s.ready);
          this.set({ template, state: 'starting' }, s.starting);
        }
      },
    });
    new Counter({
      name: 'sandboxkit_warm_pool_creates_total',
      help: "Creates of a warm pool's template: taken (served from the pool) or missed (it was empty; started cold).",
      labelNames: ['template', 'outcome'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [template, s] of Object.entries(pools())) {
          this.inc({ template, outcome: 'taken' }, s.takes);
          this.inc({ template, outcome: 'missed' }, s.misses);
        }
      },
    });
    new Counter({
      name: 'sandboxkit_warm_pool_evictions_total',
      help: "A warm pool's sandboxes removed to make room for a create the host's admission refused.",
      labelNames: ['template'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [template, s] of Object.entries(pools())) this.inc({ template }, s.evictions);
      },
    });
    this.operations = new Histogram({
      name: 'sandboxkit_sandbox_operation_seconds',
      help: 'How long sandbox creates, resumes and pauses took, by outcome.',
      labelNames: ['operation', 'outcome'],
      buckets: OPERATION_BUCKETS,
      registers: [this.registry],
    });
    this.phases = new Histogram({
      name: 'sandboxkit_sandbox_phase_seconds',
      help: 'How long each phase of a sandbox operation took (create: network, container, agent, init, start+ready, store+catalog).',
      labelNames: ['operation', 'phase'],
      buckets: OPERATION_BUCKETS,
      registers: [this.registry],
    });
    this.builds = new Counter({
      name: 'sandboxkit_template_builds_total',
      help: 'Template builds that ended, by outcome (ready or error).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.buildSeconds = new Histogram({
      name: 'sandboxkit_template_build_seconds',
      help: 'How long template builds ran, by outcome.',
      labelNames: ['outcome'],
      buckets: BUILD_BUCKETS,
      registers: [this.registry],
    });
  }

  phase(operation: TimedOperation, phase: string, seconds: number): void {
    this.phases.observe({ operation, phase }, seconds);
  }

  done(operation: TimedOperation, outcome: 'ok' | 'error', seconds: number): void {
    this.operations.observe({ operation, outcome }, seconds);
  }

  buildFinished(outcome: 'ready' | 'error', seconds: number): void {
    this.builds.inc({ outcome });
    this.buildSeconds.observe({ outcome }, seconds);
  }

  route(): Route {
    return {
      method: 'GET',
      path: '/metrics',
      auth: 'admin',
      handler: async () => ({ status: 200, text: { contentType: PROMETHEUS_CONTENT_TYPE, body: await this.registry.metrics() } }),
    };
  }
}
