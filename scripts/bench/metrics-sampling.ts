/**
 * Metrics sampling benchmark: the CPU the platform spends on one metrics sample of one sandbox (cgroup CPU and memory,
 * memory.stat, the disk walk of its upper dir, the store read and the bookkeeping), with N real sandboxes running,
 * against a floor in the same run: reading just the two cgroup counters of each sandbox (CPU time and memory) with
 * nothing else. Reported: CPU µs per sandbox per sample for both, their ratio, and the share of one CPU the sampler
 * takes at its 5 s interval. Root only; makes one link into the root namespace (the standalone sandbox network).
 *
 *   node dist/scripts/bench/metrics-sampling.js [--sandboxes 50] [--rounds 40] [--json FILE]
 */
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPlatformOnHost } from '../../src/platform/on-host';
import { newSandboxSchema } from '../../src/platform/sandboxes/requests';
import { SAMPLE_INTERVAL_MS } from '../../src/platform/sandboxes/usage-sampler';
import { hostCgroupMounts } from '../../src/runtime/cgroups';
import { instancePaths, cgroupsPathOf } from '../../src/runtime/instance';
import { cgroupFilesOf } from '../../src/runtime/usage';

function log(msg: string): void {
  process.stderr.write(`metrics-sampling: ${msg}\n`);
}

/** CPU microseconds (user + system) this process spent running `fn` `rounds` times. */
async function cpuMicros(rounds: number, fn: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < rounds; i++) await fn();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { sandboxes: { type: 'string', default: '50' }, rounds: { type: 'string', default: '40' }, json: { type: 'string' } },
  });
  const count = Number(values.sandboxes);
  const rounds = Number(values.rounds);
  const stateDir = await mkdtemp(join(tmpdir(), 'sk-bench-metrics-'));
  const platform = await startPlatformOnHost({ stateDir, log: () => {} });
  try {
    // The timed rounds are the only sampling: the platform's own 5 s timer is stopped.
    await platform.usage.stop();
    log(`creating ${count} sandboxes from base (${platform.runtimeName})`);
    for (let i = 0; i < count; i++) {
      await platform.sandboxes.create(newSandboxSchema.parse({ templateID: 'base', timeout: 3600 }));
      if ((i + 1) % 10 === 0) log(`${i + 1} running`);
    }
    const paths = instancePaths(platform.instance, platform.runtimeName, { dataRoot: join(stateDir, 'runtime') });
    const mounts = hostCgroupMounts();
    const ids = (await platform.sandboxes.all()).map((r) => r.sandboxID);
    const floorFiles = ids.map((id) => cgroupFilesOf(cgroupsPathOf(paths, id), mounts)).filter((f) => f !== undefined);
    if (floorFiles.length !== count) throw new Error(`found the cgroup files of ${floorFiles.length} of ${count} sandboxes`);

    // Warm both paths (first reads, JIT), then alternate them so the host's load falls on both alike.
    await platform.usage.sampleOnce();
    let kit = 0;
    let floor = 0;
    for (let r = 0; r < rounds; r++) {
      kit += await cpuMicros(1, async () => {
        const sampled = await platform.usage.sampleOnce();
        if (sampled !== count) throw new Error(`sampled ${sampled} of ${count}`);
      });
      floor += await cpuMicros(1, () => {
        for (const f of floorFiles) {
          fs.readFileSync(f.cpu.file, 'utf8');
          fs.readFileSync(f.memoryCurrent, 'utf8');
        }
      });
    }
    const kitPer = kit / rounds / count;
    const floorPer = floor / rounds / count;
    const share = (kitPer * count) / (SAMPLE_INTERVAL_MS * 1000);
    const result = {
      sandboxes: count,
      rounds,
      kitMicrosPerSandboxSample: Math.round(kitPer * 10) / 10,
      floorMicrosPerSandboxSample: Math.round(floorPer * 10) / 10,
      ratio: Math.round((kitPer / floorPer) * 100) / 100,
      shareOfOneCpuAtInterval: Math.round(share * 10000) / 10000,
    };
    console.log(
      `metrics sampling, ${count} running sandboxes, ${rounds} rounds: kit ${result.kitMicrosPerSandboxSample} µs CPU per sandbox per sample; ` +
        `floor (two cgroup counters) ${result.floorMicrosPerSandboxSample} µs; ratio kit/floor ${result.ratio}; ` +
        `${(share * 100).toFixed(2)}% of one CPU at one sample per ${SAMPLE_INTERVAL_MS / 1000} s`,
    );
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await platform.close({ killSandboxes: true });
    await rm(stateDir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(`metrics-sampling: ${err.stack ?? err.message}`);
  process.exit(1);
});
