import { cpuPercent, inRange, UsageSampler, type SampledSandbox } from '../../../../src/platform/sandboxes/usage-sampler';
import type { SandboxUsage } from '../../../../src/runtime/types';

test('CPU percent is a share of the CPUs the sandbox may use, clamped to 0..100', () => {
  expect(cpuPercent(5_000_000, 5_000, 1)).toBe(100);
  expect(cpuPercent(5_000_000, 5_000, 2)).toBe(50);
  expect(cpuPercent(1_234_567, 5_000, 1)).toBe(24.69);
  expect(cpuPercent(9_000_000, 5_000, 1)).toBe(100);
  expect(cpuPercent(-5, 5_000, 1)).toBe(0);
  expect(cpuPercent(5, 0, 1)).toBe(0);
});

test('the sampler keeps running sandboxes only, for a bounded time, and forgets removed ones', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  let cpu = 0;
  let list: SampledSandbox[] = [
    { sandboxID: 'a', state: 'running', cpuCount: 1, memoryMB: 512, startedAt: new Date(now - 5_000).toISOString() },
    { sandboxID: 'p', state: 'paused', cpuCount: 1, memoryMB: 512, startedAt: new Date(now).toISOString() },
  ];
  const usage = (): SandboxUsage => ({
    cpuUsageUsec: cpu,
    memoryUsedBytes: 1000,
    memoryCacheBytes: 10,
    diskUsedBytes: 4096,
    diskTotalBytes: 1 << 30,
  });
  const sampler = new UsageSampler({ read: usage, sandboxes: async () => list, now: () => now, keepMs: 20_000 });
  cpu = 2_500_000;
  expect(await sampler.sampleOnce()).toBe(1);
  // First sample: the average since the sandbox started (2.5 s of CPU over 5 s).
  expect(sampler.latest('a')).toMatchObject({ cpuUsedPct: 50, cpuCount: 1, memTotal: 512 * 1024 * 1024, memUsed: 1000, diskUsed: 4096 });
  expect(sampler.latest('p')).toBeUndefined();
  for (let i = 0; i < 6; i++) {
    now += 5_000;
    cpu += 5_000_000;
    await sampler.sampleOnce();
  }
  const all = sampler.samples('a');
  expect(all.every((m) => m.timestampUnix >= Math.floor((now - 20_000) / 1000))).toBe(true);
  expect(all.length).toBe(5);
  expect(all.at(-1)?.cpuUsedPct).toBe(100);
  const last = all.at(-1)?.timestampUnix as number;
  expect(sampler.samples('a', last - 5, last).length).toBe(2);
  list = [];
  await sampler.sampleOnce();
  expect(sampler.samples('a')).toEqual([]);
  expect(inRange([], 1, 2)).toEqual([]);
});
