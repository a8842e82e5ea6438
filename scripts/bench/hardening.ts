/**
 * What the sandbox hardening costs: create -> first agent call (GET /health 204, then a Stat) and a
 * `commands.run('true')` round trip (Process.Start of /bin/true to its end event), p50/p95, with the hardening on
 * (user namespace made with the network namespace, shifted layers, seccomp) and off (a plain network namespace, the
 * unshifted base, no user namespace, no seccomp, no disk of its own), per runtime, in one run; the columns take turns
 * sample by sample. A third column per runtime is hardened without the sandbox's disk (a loop-mounted ext4 image,
 * sandbox-disk.ts): on against it is what the disk costs.
 * Also a ListDir of /usr/bin (one directory of ~400 entries), and each runtime against the first one listed (e.g.
 * runsc, gVisor, against crun), both hardened. Root only; makes one link into the root namespace (the standalone
 * sandbox network).
 *
 * With `--steps N`: also N template build steps per column (the first runtime listed; a step writing 5 MB, network
 * 'none'), each on a disk of its own (builds.stepDiskMB's default size) against none, taking turns step by step,
 * with where a step's time goes.
 *
 *   node dist/scripts/bench/hardening.js [--samples 30] [--runtimes crun,runc,runsc] [--steps 0]
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { bundle, bundleEntries } from '../bundle';
import { DEFAULT_AGENT_PORT } from '../../src/contract/agent-port';
import { MmdebstrapImages } from '../../src/runtime/base-images';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { BridgeNetwork } from '../../src/runtime/network/bridge-network';
import { createSandboxHostNetwork } from '../../src/runtime/network/host-network';
import { createOciRuntime, type OciSandboxRuntime } from '../../src/runtime/oci-runtime';
import { createStepExecutor } from '../../src/runtime/step-executor';
import type { RuntimeChoice } from '../../src/runtime/types';
import { StepTotals, timed } from '../../src/util/step-times';

const PORT = DEFAULT_AGENT_PORT;

function log(msg: string): void {
  process.stderr.write(`hardening: ${msg}\n`);
}

function post(url: string, body: Buffer | string, contentType: string, timeoutMs = 5000): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, timeout: timeoutMs, headers: { 'content-type': contentType, 'connect-protocol-version': '1' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: -1, body: Buffer.alloc(0) }));
    req.end(body);
  });
}

function health(address: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(`http://${address}:${PORT}/health`, { agent: false, timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(-1));
  });
}

async function firstCall(address: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await health(address)) !== 204) {
    if (Date.now() > deadline) throw new Error(`no answer from ${address}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  const stat = await post(`http://${address}:${PORT}/filesystem.Filesystem/Stat`, '{"path":"/"}', 'application/json');
  if (stat.status !== 200) throw new Error(`Stat answered ${stat.status}`);
}

/** Process.Start of /bin/true over Connect streaming, to the end of the stream (what commands.run('true') waits for). */
async function runTrue(address: string): Promise<void> {
  const json = Buffer.from(JSON.stringify({ process: { cmd: '/bin/true', args: [] } }));
  const frame = Buffer.alloc(5 + json.length);
  frame.writeUInt32BE(json.length, 1);
  json.copy(frame, 5);
  const r = await post(`http://${address}:${PORT}/process.Process/Start`, frame, 'application/connect+json');
  if (r.status !== 200 || !r.body.includes('"end"')) throw new Error(`run true answered ${r.status}: ${r.body.toString().slice(0, 200)}`);
}

/** ListDir of a large directory, as files.list sends it. */
async function listDir(address: string): Promise<void> {
  const r = await post(`http://${address}:${PORT}/filesystem.Filesystem/ListDir`, '{"path":"/usr/bin","depth":1}', 'application/json');
  if (r.status !== 200 || !r.body.includes('"entries"')) throw new Error(`ListDir answered ${r.status}`);
}

interface Column {
  name: string;
  rt: OciSandboxRuntime;
  network: BridgeNetwork;
  /** Each step of the create (attach, the runtime's steps, the agent's start), per sample. */
  steps: StepTotals;
}

/** A table of each column's p50 per step (StepTotals). */
function printSteps(title: string, columns: Array<{ name: string; steps: StepTotals }>): void {
  console.log(`\n${title}\n`);
  console.log(`| step | ${columns.map((c) => c.name).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---|').join('')}`);
  const medians = columns.map((c) => c.steps.medians());
  for (const step of [...new Set(medians.flatMap((m) => [...m.keys()]))]) {
    console.log(`| ${step} | ${medians.map((m) => (m.has(step) ? `${m.get(step)!.toFixed(1)} ms` : '-')).join(' | ')} |`);
  }
}

/**
 * Build steps with a disk of their own against none, taking turns: each writes 5 MB (its layer gets them), network
 * 'none'; prints the figures and where the time goes.
 */
async function benchSteps(runtime: RuntimeChoice, rootfs: string, scratch: string, samples: number): Promise<void> {
  const columns = [true, false].map((disks) => {
    const steps = new StepTotals();
    const instance = `hstep${disks ? 'd' : 'n'}${randomBytes(2).toString('hex')}`;
    const roots = { stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') };
    return {
      name: `${runtime} step, ${disks ? 'its own disk' : 'no disk'}`,
      steps,
      roots,
      executor: createStepExecutor({ instance, runtime, ...roots, disks, times: steps.add }),
      instance,
      total: [] as number[],
    };
  });
  try {
    for (let i = -1; i < samples; i++) {
      for (const c of columns) {
        const layerDir = fs.mkdtempSync(path.join(scratch, 'layer-'));
        const t0 = performance.now();
        const code = await c.executor.run({
          layers: [rootfs],
          layerDir,
          argv: ['/bin/sh', '-c', 'dd if=/dev/zero of=/five bs=1M count=5 status=none'],
          user: 'root',
          workdir: '/',
          env: {},
          network: 'none',
          memoryMB: 512,
          cpuCount: 1,
          timeoutMs: 60_000,
          onLine: () => undefined,
        });
        const ms = performance.now() - t0;
        if (code !== 0 || fs.statSync(path.join(layerDir, 'five')).size !== 5 * 1024 * 1024) throw new Error(`step exited ${code}`);
        fs.rmSync(layerDir, { recursive: true, force: true });
        if (i >= 0) {
          c.total.push(ms);
          c.steps.endRun();
        } else c.steps.dropRun();
      }
    }
  } finally {
    for (const c of columns) await cleanupLeftovers({ instance: c.instance, ...c.roots });
  }
  const [withDisk, without] = columns.map((c) => c.total.sort((x, y) => x - y));
  const p50 = (a: number[]) => percentile(a, 0.5);
  console.log(`\nbuild steps (${runtime}, a 5 MB write, network 'none'), ${samples} samples per cell, step start to its layer made\n`);
  console.log('| step p50 / p95, its own disk | step p50 / p95, no disk | own disk / no disk (p50) |');
  console.log('|---|---|---|');
  console.log(
    `| ${p50(withDisk!).toFixed(1)} / ${percentile(withDisk!, 0.95).toFixed(1)} ms | ${p50(without!).toFixed(1)} / ${percentile(without!, 0.95).toFixed(1)} ms | ${(p50(withDisk!) / p50(without!)).toFixed(2)}x |`,
  );
  printSteps("where a build step's time goes (p50 of each part over the samples)", columns);
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      samples: { type: 'string', default: '30' },
      runtimes: { type: 'string', default: 'crun,runc' },
      steps: { type: 'string', default: '0' },
    },
  });
  const stepSamples = Number(values.steps);
  const samples = Number(values.samples);
  const runtimes = values.runtimes!.split(',') as RuntimeChoice[];
  const instance = `hard${randomBytes(2).toString('hex')}`;
  const rootfs = await new MmdebstrapImages().rootfs('debian:bookworm', (l) => log(l));
  await bundle(bundleEntries().find((e) => e.name === 'agent')!);
  const scratch = fs.mkdtempSync('/var/tmp/sk-bench-hardening-');
  const net = await createSandboxHostNetwork(instance);
  const base = net.network as unknown as BridgeNetwork;
  const columns: Column[] = [];
  const roots = { stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') };
  try {
    for (const [i, runtime] of runtimes.entries()) {
      for (const [tag, hardened, disks] of [
        ['h', true, true],
        ['n', true, false],
        ['o', false, false],
      ] as const) {
        const name = `${runtime} ${tag}`;
        const steps = new StepTotals();
        const network = new BridgeNetwork({
          ...base.options,
          netnsPrefix: `${instance}-${i}${tag}-`,
          idMapping: hardened ? undefined : null,
          times: steps.add,
        });
        const rt = createOciRuntime({ instance: `${instance}${i}${tag}`, runtime, ...roots, network, hardened, disks, times: steps.add });
        columns.push({ name, rt, network, steps });
      }
    }
    const create: number[][] = columns.map(() => []);
    const run: number[][] = columns.map(() => []);
    const list: number[][] = columns.map(() => []);
    log(`warming up (the first hardened create shifts the base once); ${samples} samples per column`);
    for (let i = -1; i < samples; i++) {
      for (const [k, c] of columns.entries()) {
        const id = `s${i < 0 ? 'w' : i}`;
        const t0 = performance.now();
        const network = await timed(c.steps.add, 'attach', () => c.network.attach(id));
        await timed(c.steps.add, 'create', () => c.rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 512, cpuCount: 1, network }));
        await timed(c.steps.add, 'agent start to first answer', () => firstCall(network.address));
        const t1 = performance.now();
        if (i >= 0) c.steps.endRun();
        else c.steps.dropRun();
        await runTrue(network.address);
        const t2 = performance.now();
        await listDir(network.address);
        const t3 = performance.now();
        if (i >= 0) {
          create[k]!.push(t1 - t0);
          run[k]!.push(t2 - t1);
          list[k]!.push(t3 - t2);
        }
        await c.rt.kill(id);
      }
    }
    console.log(`\nhardening cost, ${samples} samples per cell (create -> first agent call; commands.run('true'))\n`);
    console.log('on: user namespace, seccomp and a disk of its own; no disk: the same without the disk; off: none of them\n');
    console.log(
      '| runtime | create p50 / p95, on | create p50 / p95, no disk | create p50 / p95, off | on / no disk (p50) | on / off (p50) | run true p50 / p95, on | run true p50 / p95, off | on / off (p50) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (let k = 0; k < columns.length; k += 3) {
      const [cOn, cNoDisk, cOff, rOn, rOff] = [create[k]!, create[k + 1]!, create[k + 2]!, run[k]!, run[k + 2]!].map((a) =>
        a.sort((x, y) => x - y),
      );
      const cell = (a: number[]) => `${percentile(a, 0.5).toFixed(1)} / ${percentile(a, 0.95).toFixed(1)} ms`;
      const ratio = (a: number[], b: number[]) => `${(percentile(a, 0.5) / percentile(b, 0.5)).toFixed(2)}x`;
      console.log(
        `| ${columns[k]!.rt.name} | ${cell(cOn!)} | ${cell(cNoDisk!)} | ${cell(cOff!)} | ${ratio(cOn!, cNoDisk!)} | ${ratio(cOn!, cOff!)} | ` +
          `${cell(rOn!)} | ${cell(rOff!)} | ${ratio(rOn!, rOff!)} |`,
      );
    }
    printSteps(
      "where a create's time goes (p50 of each step over the samples; 'attach' holds the 'attach: ' steps, 'create' the runtime's steps between it and the agent's start)",
      columns,
    );
    const peer = columns[0]!.rt.name;
    console.log(`\neach runtime against ${peer}, both hardened (p50 ratios; ListDir of /usr/bin)\n`);
    console.log(`| runtime | create p50 | / ${peer} | run true p50 | / ${peer} | ListDir p50 / p95 | / ${peer} |`);
    console.log('|---|---|---|---|---|---|---|');
    const p50 = (a: number[]) => percentile(a, 0.5);
    for (let k = 0; k < columns.length; k += 3) {
      const l = list[k]!.sort((x, y) => x - y);
      console.log(
        `| ${columns[k]!.rt.name} | ${p50(create[k]!).toFixed(1)} ms | ${(p50(create[k]!) / p50(create[0]!)).toFixed(2)}x | ` +
          `${p50(run[k]!).toFixed(1)} ms | ${(p50(run[k]!) / p50(run[0]!)).toFixed(2)}x | ` +
          `${p50(l).toFixed(1)} / ${percentile(l, 0.95).toFixed(1)} ms | ${(p50(l) / p50(list[0]!.sort((x, y) => x - y))).toFixed(2)}x |`,
      );
    }
    if (stepSamples > 0) await benchSteps(runtimes[0]!, rootfs, scratch, stepSamples);
  } finally {
    for (const c of columns) await cleanupLeftovers({ instance: c.rt.paths.instance, ...roots, network: c.network });
    await net.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`hardening: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
