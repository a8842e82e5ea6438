/**
 * Team metrics as E2B's `/teams/{teamID}/metrics` gives them: a sample at every sandbox start and removal (how many
 * the team held then, and whether it was a start), kept for METRICS_RETENTION_MS in the teams' Redis. The series and
 * its maxima are computed from the samples by pure functions.
 */
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { DEFAULT_TEAMS_PREFIX } from './store';

export const METRICS_RETENTION_MS = 30 * 24 * 3600 * 1000;
/** A sample's start rate is the starts of the minute before it, per second. */
const RATE_WINDOW_MS = 60_000;

export interface Sample {
  atMs: number;
  concurrent: number;
  started: boolean;
}

export interface TeamMetric {
  concurrentSandboxes: number;
  sandboxStartRate: number;
  timestamp: string;
  timestampUnix: number;
}

/** The series between `startMs` and `endMs` (samples sorted by time, including those before, for the rates). */
export function series(samples: readonly Sample[], startMs: number, endMs: number): TeamMetric[] {
  const out: TeamMetric[] = [];
  samples.forEach((s, i) => {
    if (s.atMs < startMs || s.atMs > endMs) return;
    let starts = 0;
    for (let j = i; j >= 0 && samples[j]!.atMs > s.atMs - RATE_WINDOW_MS; j--) if (samples[j]!.started) starts += 1;
    out.push({
      concurrentSandboxes: s.concurrent,
      sandboxStartRate: starts / (RATE_WINDOW_MS / 1000),
      timestamp: new Date(s.atMs).toISOString(),
      timestampUnix: Math.floor(s.atMs / 1000),
    });
  });
  return out;
}

export type MaxMetric = 'concurrent_sandboxes' | 'sandbox_start_rate';

/** The largest value of `metric` in the interval, when it was reached (zero at `endMs` when nothing happened). */
export function maximum(samples: readonly Sample[], metric: MaxMetric, startMs: number, endMs: number) {
  let best = { value: 0, atMs: endMs };
  for (const m of series(samples, startMs, endMs)) {
    const value = metric === 'concurrent_sandboxes' ? m.concurrentSandboxes : m.sandboxStartRate;
    if (value > best.value) best = { value, atMs: m.timestampUnix * 1000 };
  }
  return { timestamp: new Date(best.atMs).toISOString(), timestampUnix: Math.floor(best.atMs / 1000), value: best.value };
}

export class TeamMetrics {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = DEFAULT_TEAMS_PREFIX,
  ) {}

  private key(teamID: string): string {
    return `${this.prefix}metrics:${teamID}`;
  }

  async sample(teamID: string, concurrent: number, started: boolean, atMs = Date.now()): Promise<void> {
    const member = `${atMs}:${concurrent}:${started ? 1 : 0}:${randomBytes(4).toString('hex')}`;
    await this.redis
      .multi()
      .zadd(this.key(teamID), atMs, member)
      .zremrangebyscore(this.key(teamID), '-inf', atMs - METRICS_RETENTION_MS)
      .exec();
  }

  /** Samples from a minute before `startMs` (for the first rates) to `endMs`, oldest first. */
  async samples(teamID: string, startMs: number, endMs: number): Promise<Sample[]> {
    const raw = await this.redis.zrangebyscore(this.key(teamID), startMs - RATE_WINDOW_MS, endMs);
    return raw.map((m) => {
      const [at, concurrent, started] = m.split(':');
      return { atMs: Number(at), concurrent: Number(concurrent), started: started === '1' };
    });
  }

  async forget(teamID: string): Promise<void> {
    await this.redis.del(this.key(teamID));
  }
}
