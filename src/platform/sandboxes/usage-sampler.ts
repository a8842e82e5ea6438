/**
 * Sandbox metrics as the E2B SDK reads them (`getMetrics`): every interval, each running sandbox of this platform is
 * read (cgroup CPU time and memory, the bytes of its writes) and one sample kept, for a bounded time. Samples live in
 * this process's memory: they describe the last hour of a host's sandboxes, not a history to keep.
 */
import type { SandboxUsage } from '../../runtime/types';

export const SAMPLE_INTERVAL_MS = 5_000;
export const SAMPLE_KEEP_MS = 60 * 60_000;

/** One sample on the wire (the SDK's SandboxMetric). */
export interface SandboxMetric {
  timestamp: string;
  timestampUnix: number;
  cpuCount: number;
  cpuUsedPct: number;
  memUsed: number;
  memTotal: number;
  memCache: number;
  diskUsed: number;
  diskTotal: number;
}

/** What the sampler needs of a sandbox: which, its limits, and since when it runs (the first sample's baseline). */
export interface SampledSandbox {
  sandboxID: string;
  state: string;
  cpuCount: number;
  memoryMB: number;
  startedAt: string;
}

export interface UsageSamplerOptions {
  read(sandboxID: string): SandboxUsage | undefined;
  sandboxes(): Promise<SampledSandbox[]>;
  intervalMs?: number;
  keepMs?: number;
  now?: () => number;
  log?: (line: string) => void;
}

/** CPU use over an interval, as a share of the CPUs the sandbox may use (100 = all of them busy). */
export function cpuPercent(cpuUsecDelta: number, wallMsDelta: number, cpuCount: number): number {
  if (wallMsDelta <= 0 || cpuCount <= 0) return 0;
  const pct = (cpuUsecDelta / (wallMsDelta * 1000 * cpuCount)) * 100;
  return Math.round(Math.min(100, Math.max(0, pct)) * 100) / 100;
}

/** Samples from `startSec` to `endSec` (unix seconds, both inclusive, either absent for open). */
export function inRange(series: readonly SandboxMetric[], startSec?: number, endSec?: number): SandboxMetric[] {
  return series.filter(
    (m) => (startSec === undefined || m.timestampUnix >= startSec) && (endSec === undefined || m.timestampUnix <= endSec),
  );
}

interface Series {
  last: { cpuUsec: number; atMs: number };
  samples: SandboxMetric[];
}

export class UsageSampler {
  private readonly series = new Map<string, Series>();
  private readonly intervalMs: number;
  private readonly keepMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly o: UsageSamplerOptions) {
    this.intervalMs = o.intervalMs ?? SAMPLE_INTERVAL_MS;
    this.keepMs = o.keepMs ?? SAMPLE_KEEP_MS;
    this.now = o.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.sampleOnce()
        .then(() => undefined)
        .catch((err: Error) => this.o.log?.(`metrics sampling: ${err.message}`))
        .finally(() => {
          this.running = undefined;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round: a sample of every running sandbox; sandboxes that are gone are forgotten. */
  async sampleOnce(): Promise<number> {
    const sandboxes = await this.o.sandboxes();
    const present = new Set(sandboxes.map((s) => s.sandboxID));
    for (const id of this.series.keys()) if (!present.has(id)) this.series.delete(id);
    let sampled = 0;
    for (const s of sandboxes) {
      if (s.state !== 'running') continue;
      const usage = this.o.read(s.sandboxID);
      if (!usage) continue;
      this.add(s, usage);
      sampled += 1;
    }
    return sampled;
  }

  private add(s: SampledSandbox, usage: SandboxUsage): void {
    const atMs = this.now();
    const known = this.series.get(s.sandboxID);
    // The first sample averages over the sandbox's life so far.
    const last = known?.last ?? { cpuUsec: 0, atMs: Date.parse(s.startedAt) };
    const sample: SandboxMetric = {
      timestamp: new Date(atMs).toISOString(),
      timestampUnix: Math.floor(atMs / 1000),
      cpuCount: s.cpuCount,
      cpuUsedPct: cpuPercent(usage.cpuUsageUsec - last.cpuUsec, atMs - last.atMs, s.cpuCount),
      memUsed: usage.memoryUsedBytes,
      memTotal: s.memoryMB * 1024 * 1024,
      memCache: usage.memoryCacheBytes,
      diskUsed: usage.diskUsedBytes,
      diskTotal: usage.diskTotalBytes,
    };
    const series = known ?? { last, samples: [] };
    series.last = { cpuUsec: usage.cpuUsageUsec, atMs };
    series.samples.push(sample);
    const oldest = Math.floor((atMs - this.keepMs) / 1000);
    while (series.samples.length > 0 && (series.samples[0] as SandboxMetric).timestampUnix < oldest) series.samples.shift();
    this.series.set(s.sandboxID, series);
  }

  samples(sandboxID: string, startSec?: number, endSec?: number): SandboxMetric[] {
    return inRange(this.series.get(sandboxID)?.samples ?? [], startSec, endSec);
  }

  latest(sandboxID: string): SandboxMetric | undefined {
    return this.series.get(sandboxID)?.samples.at(-1);
  }
}
