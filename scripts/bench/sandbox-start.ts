/**
 * Sandbox start benchmark: create -> first successful agent call (GET /health 204, then a Stat), p50/p95 over
 * `--samples` sandboxes, with 1, 10 and 50 sandboxes already running, for each start path ("column"):
 *
 * - kit:   the runtime as the platform drives it: network attach + create (overlay, bundle, `run -d`) + agent
 *          answering /health and Stat. Every column's host commands start from the spawn helper, as the platform's
 *          (src/util/spawn-helper.ts).
 * - floor: the bare runtime in the same run: one `crun run -d` of the same rootfs (overlay mount, minimal
 *          config.json; as the kit's create does, `crun create` makes the network namespace, then `crun start` while
 *          the sandbox's link is moved in by the container's pid, by iproute2's commands, not the kit's netns-join
 *          program) with a trivial HTTP responder (`node -e` http server, no agent, no tini, no /etc
 *          files) -> first 204. Its attach is not timed. It has the kit's hardening: the seccomp profile (compiled by
 *          crun at every run), and a user namespace of its own owning the network namespace, over the id-shifted
 *          copy of the rootfs (`--floor-hardening off`: neither).
 *
 * - api:   through the platform API as a client sees it: `POST /v2/sandboxes` (201 once the agent answered /health
 *          and took /init) -> a Stat through the gateway with the returned token. The platform runs in this process
 *          on its own runtime instance and network prefix (its restart reconciliation must not see the others).
 * - pool:  the same through a second platform with a warm pool of `--pool` `base` sandboxes (docs/platform.md#warm-pool):
 *          the create takes a started one. After each sample it waits for the pool to be full again (the refill is
 *          not timed, and never runs during another column's sample). `--pool 0` leaves the column out.
 *
 * - baseline: with `--baseline-agent DIR`, the kit column again with the agent bundle in DIR (dist/bundle of another
 *          build, e.g. the commit before a change to the agent), so a change's effect is a ratio of one run.
 *
 * Further columns are one more entry in the column list. Idle memory per sandbox is the
 * drop of MemAvailable with N agents idle, divided by N. Sequential creates, the columns taking turns sample by
 * sample; each measured sandbox is killed before the next. Root only; makes one link into the root namespace (the standalone sandbox network).
 *
 * `--ramp N` measures density against the floor instead of levels: the columns take turns, each making N sandboxes
 * one after another that stay running until the run ends (so every create takes memory and kernel state no sandbox
 * has freed, as a host filling up gives them), and each column's p50 per bucket of create numbers (ramp-buckets.ts:
 * 1-20, 81-100 and 181-200 of 200) is set beside its own first bucket; the api's growth over the floor's is the
 * kit's own. The pool column is left out (a pool's take is not a cold create). Its sandboxes get `--subnet`, by
 * default 10.236.0.0/22 (a /24 holds too few).
 *
 *   node dist/scripts/bench/sandbox-start.js [--samples 50] [--levels 1,10,50] [--runtime auto|crun|runc] [--pool 2]
 *     [--floor-hardening on|off] [--baseline-agent DIR] [--ramp N] [--subnet CIDR] [--json FILE]
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { bundle, bundleEntries } from '../bundle';
import { DEFAULT_AGENT_PORT } from '../../src/contract/agent-port';
import { checkAgentPayload, defaultAgentPayload, payloadBinds, PAYLOAD_DIR } from '../../src/runtime/agent-payload';
import { MmdebstrapImages } from '../../src/runtime/base-images';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { removeCgroup } from '../../src/runtime/cgroups';
import { containerNofile } from '../../src/runtime/host-limits';
import { createSandboxHostNetwork, type SandboxHostNetwork } from '../../src/runtime/network/host-network';
import { STAGED_ROOTFS, stagedBinds } from '../../src/runtime/oci-cli';
import { renderOciConfig } from '../../src/runtime/oci-config';
import { DEFAULT_ID_MAPPING, shiftedLayer } from '../../src/runtime/id-shift';
import { createOciRuntime, type OciSandboxRuntime } from '../../src/runtime/oci-runtime';
import type { NetworkAttachment, RuntimeChoice } from '../../src/runtime/types';
import { BridgeNetwork } from '../../src/runtime/network/bridge-network';
import { parseSubnet } from '../../src/runtime/network/ipv4';
import type { StepTimes } from '../../src/util/step-times';
import { useSpawnHelper } from '../../src/util/exec';
import { startGateway, type RunningGateway } from '../../src/gateway';
import { startPlatform, type RunningPlatform } from '../../src/platform';
import { admissionFor } from './bench-admission';
import { rampBuckets } from './ramp-buckets';

function log(msg: string): void {
  process.stderr.write(`sandbox-start: ${msg}\n`);
}

const PORT = DEFAULT_AGENT_PORT;

function request(method: 'GET' | 'POST', url: string, body?: string, timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method,
        agent: false,
        timeout: timeoutMs,
        headers: body ? { 'content-type': 'application/json', 'connect-protocol-version': '1' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve(-1);
    });
    req.on('error', () => resolve(-1));
    req.end(body);
  });
}

async function until204(address: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await request('GET', `http://${address}:${PORT}/health`)) !== 204) {
    if (Date.now() > deadline) throw new Error(`no answer from ${address}:${PORT} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function stat(address: string): Promise<void> {
  const code = await request('POST', `http://${address}:${PORT}/filesystem.Filesystem/Stat`, JSON.stringify({ path: '/' }));
  if (code !== 200) throw new Error(`Stat at ${address} answered ${code}`);
}

interface Started {
  readyMs: number;
  /**
   * The sample's steps in order, ms each. The kit columns: attach, create (and its parts), agent to /health, first Stat. The
   * floor: its files, the runtime's create, the network join (with the runtime's start), the responder to its 204. The API
   * columns: `request` (the create's answer as the client waited for it, less the platform's own create), the phases
   * of the platform's create from its log line (`ready in N ms: PHASE MS, ...`), `call` (the Stat through the gateway).
   */
  steps?: Record<string, number>;
  stop(): Promise<void>;
}

interface Column {
  name: string;
  start(id: string): Promise<Started>;
}

interface Env {
  rootfs: string;
  /** The floor with the kit's hardening (seccomp, user namespace, shifted rootfs), or with neither. */
  floorHardened: boolean;
  net: SandboxHostNetwork;
  rt: OciSandboxRuntime;
  scratch: string;
  /** Every runtime's host admission: room for the most sandboxes the run keeps. */
  admission: ReturnType<typeof admissionFor>;
}

/**
 * The kit column's steps: the attach, the runtime's create (files and `crun run -d`), the agent's start to its first
 * /health, the first Stat; between create and agent, the parts of the create as the runtime and the network time
 * them (`create: <step>`; the port is made while the create's first steps run, and the join waits for it).
 */
const KIT_STEPS = ['attach', 'create', 'agent', 'stat'] as const;

/** Where the kit's runtime and network tell their step times: the sample being measured, when one is. */
const createSteps: { sink: StepTimes | undefined; times: StepTimes } = {
  sink: undefined,
  times: (step, ms) => createSteps.sink?.(step, ms),
};

function kitColumn(env: Env, rt = env.rt, name = 'kit (attach+create+health+Stat)'): Column {
  return {
    name,
    async start(id) {
      const parts: Record<string, number> = {};
      createSteps.sink = (step, ms) => (parts[`create: ${step}`] = (parts[`create: ${step}`] ?? 0) + ms);
      const marks = [performance.now()];
      try {
        const network = await env.net.network.attach(id);
        marks.push(performance.now());
        await rt.create({ sandboxID: id, layers: [env.rootfs], memoryMB: 512, cpuCount: 1, network });
        marks.push(performance.now());
        await until204(network.address);
        marks.push(performance.now());
        await stat(network.address);
        marks.push(performance.now());
      } finally {
        createSteps.sink = undefined;
      }
      const [attach, create, agent, stat_] = KIT_STEPS.map((_, i) => marks[i + 1]! - marks[i]!);
      const steps = { attach: attach!, create: create!, ...parts, agent: agent!, stat: stat_! };
      return { readyMs: marks[4]! - marks[0]!, steps, stop: () => rt.kill(id) };
    },
  };
}

/** One `crun run -d` of the same rootfs with a trivial responder: what any runtime-based design pays at least. */
async function floorColumn(env: Env): Promise<Column> {
  const payload = defaultAgentPayload();
  const server = `require('http').createServer((q,s)=>{s.statusCode=204;s.end()}).listen(${PORT})`;
  const mapping = DEFAULT_ID_MAPPING;
  // The same bridge and names as the kit's, its link joined by iproute2's commands, as a bare runtime's setup has them
  // (not the kit's netns-join program).
  const floorNetwork = new BridgeNetwork({ ...(env.net.network as unknown as BridgeNetwork).options, times: undefined, netnsJoin: null });
  // The shifted copy is made once (the kit's creates reuse it the same way), before any clock runs.
  const lower = env.floorHardened ? await shiftedLayer(env.rootfs, mapping) : env.rootfs;
  return {
    name: `floor (bare crun run, node responder${env.floorHardened ? ', same hardening' : ', no hardening'})`,
    async start(id) {
      const network: NetworkAttachment = await floorNetwork.attach(id);
      const dir = path.join(env.scratch, 'floor', id);
      const cgroupsPath = `/sandbox-kit-${env.rt.paths.instance}-floor/${id}`;
      const t0 = performance.now();
      for (const d of ['upper', 'work']) fs.mkdirSync(path.join(dir, d), { recursive: true });
      if (env.floorHardened) fs.lchownSync(path.join(dir, 'upper'), mapping.base, mapping.base);
      const nodeBind = payloadBinds(payload).filter((b) => b.target.endsWith('/node'));
      const nodeStaged = stagedBinds(nodeBind.map((b) => b.source));
      const config = renderOciConfig({
        rootfs: STAGED_ROOTFS,
        args: [`${PAYLOAD_DIR}/node`, '-e', server],
        env: {},
        cwd: '/',
        uid: 0,
        gid: 0,
        hostname: id,
        // As the kit's: the runtime makes the namespaces, the sandbox's link is moved in before start (join-link.ts).
        ...(network.pending ? { privateNetwork: true } : { netnsPath: network.netnsPath }),
        memoryBytes: 512 * 1024 * 1024,
        cpuCount: 1,
        pidsLimit: 4096,
        cgroupsPath,
        binds: nodeBind.map((b, i) => ({ ...b, source: nodeStaged[i]!.target })),
        nofile: containerNofile(20_000),
        hardened: env.floorHardened,
        ...(env.floorHardened ? { userns: { mapping } } : {}),
      });
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
      const marks = [performance.now()];
      const code = await env.rt.cli.runDetached(
        id,
        dir,
        {
          overlay: { lower: [lower], upper: path.join(dir, 'upper'), work: path.join(dir, 'work'), target: STAGED_ROOTFS },
          binds: nodeStaged,
        },
        path.join(dir, 'log'),
        path.join(dir, 'pid'),
        { createOnly: network.pending !== undefined },
      );
      if (code !== 0) throw new Error(`floor: crun run failed: ${fs.readFileSync(path.join(dir, 'log'), 'utf8')}`);
      marks.push(performance.now());
      if (network.pending)
        await network.pending.join(Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8').trim()), () => env.rt.cli.start(id));
      marks.push(performance.now());
      await until204(network.address);
      marks.push(performance.now());
      const readyMs = performance.now() - t0;
      const [files, create, join, responder] = [marks[0]! - t0, marks[1]! - marks[0]!, marks[2]! - marks[1]!, marks[3]! - marks[2]!];
      return {
        readyMs,
        // As the kit column names them: the join includes the runtime's start.
        steps: { files, 'runtime create': create, 'network join': join, responder },
        stop: async () => {
          await env.rt.cli.remove(id);
          removeCgroup(cgroupsPath.slice(1));
          removeCgroup(cgroupsPath.split('/')[1]!);
          fs.rmSync(dir, { recursive: true, force: true });
          await floorNetwork.detach(id);
        },
      };
    },
  };
}

/** Each API column's platform's log, by instance (the platform is started before its column's reader exists). */
const platformLogs = new Map<string, (line: string) => void>();

/**
 * The platform API column: create through the API, then the first agent call through the gateway. With `pool`, the
 * platform keeps that many `base` sandboxes warm, and a sample's stop waits for the pool to be full again.
 */
async function apiColumn(env: Env, instance: string, runtime: RuntimeChoice, pool = 0): Promise<Column & { close(): Promise<void> }> {
  const net = env.net.network as unknown as BridgeNetwork;
  const network = new BridgeNetwork({ ...net.options, netnsPrefix: `${instance}-`, times: undefined });
  const roots = { stateRoot: path.join(env.scratch, `state-${instance}`), dataRoot: path.join(env.scratch, `data-${instance}`) };
  const rt = createOciRuntime({ instance, runtime, ...roots, admission: env.admission });
  const platform: RunningPlatform = await startPlatform({
    stateDir: path.join(env.scratch, `platform-${instance}`),
    log: (line) => platformLogs.get(instance)?.(line),
    runtime: rt,
    network,
    baseImages: { supported: ['bookworm'], rootfs: async () => env.rootfs },
    ...(pool > 0 ? { warmPool: { base: pool }, warmPoolCheckMs: 100 } : {}),
  });
  const gateway: RunningGateway = await startGateway({ catalog: platform.catalog });
  // The platform's own create of each sandbox, from its log line: the total and its phases (service.ts's PhaseClock).
  const created = new Map<string, { ms: number; phases: Record<string, number> }>();
  platformLogs.set(instance, (line) => {
    const m = /^sandbox (\S+) running \(.*ready in (\d+) ms: (.*)\)$/.exec(line);
    if (!m) return;
    const phases = Object.fromEntries(
      m[3]!.split(', ').map((part) => {
        const at = part.lastIndexOf(' ');
        return [part.slice(0, at), Number(part.slice(at + 1))];
      }),
    );
    created.set(m[1]!, { ms: Number(m[2]), phases });
  });
  const headers = { 'x-api-key': platform.apiKey, 'content-type': 'application/json' };
  const poolFull = async () => {
    const deadline = Date.now() + 120_000;
    while ((platform.sandboxes.warmPool().base ?? []).length < pool) {
      if (Date.now() > deadline) throw new Error(`the warm pool did not refill to ${pool} within 120 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await poolFull();
  return {
    name: pool > 0 ? `pool (the same, warm pool of ${pool})` : 'api (POST /v2/sandboxes+Stat via gateway)',
    async start() {
      const t0 = performance.now();
      const res = await fetch(`${platform.url}/v2/sandboxes`, { method: 'POST', headers, body: '{"templateID":"base"}' });
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
      const sandbox = (await res.json()) as { sandboxID: string; envdAccessToken: string };
      const t1 = performance.now();
      const statRes = await fetch(`http://127.0.0.1:${gateway.port}/filesystem.Filesystem/Stat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'connect-protocol-version': '1',
          'E2b-Sandbox-Id': sandbox.sandboxID,
          'X-Access-Token': sandbox.envdAccessToken,
        },
        body: '{"path":"/"}',
      });
      await statRes.body?.cancel();
      if (statRes.status !== 200) throw new Error(`Stat through the gateway answered ${statRes.status}`);
      const t2 = performance.now();
      const own = created.get(sandbox.sandboxID);
      created.delete(sandbox.sandboxID);
      const steps: Record<string, number> = own
        ? { request: t1 - t0 - own.ms, ...own.phases, call: t2 - t1 }
        : { create: t1 - t0, call: t2 - t1 };
      return {
        readyMs: t2 - t0,
        steps,
        stop: async () => {
          const del = await fetch(`${platform.url}/sandboxes/${sandbox.sandboxID}`, { method: 'DELETE', headers });
          if (del.status !== 204) throw new Error(`kill answered ${del.status}`);
          await poolFull();
        },
      };
    },
    async close() {
      await gateway.close();
      await platform.close({ killSandboxes: true });
      await cleanupLeftovers({ instance, ...roots, network });
    },
  };
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Each step's p50 over the samples. */
function p50Steps(steps: Record<string, number[]>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(steps).map(([name, xs]) => [
      name,
      percentile(
        [...xs].sort((a, b) => a - b),
        0.5,
      ),
    ]),
  );
}

/** The ramp's default subnet (--subnet): room for 4 columns of 200 and more, off the standalone range's /24s. */
const RAMP_SUBNET = '10.236.0.0/22';

/**
 * How many sandboxes a subnet holds (parseSubnet's error for one that is not a subnet): its addresses less the
 * network's, the broadcast's, the bridge's and the root side's (host-network.ts).
 */
function subnetHosts(cidr: string): number {
  return 2 ** (32 - parseSubnet(cidr).prefix) - 4;
}

/** A ramp stops before the host's memory runs short (a shared host): MemAvailable below this, in MiB. */
const RAMP_MIN_AVAILABLE_MIB = 3072;

interface RampResult {
  bucket: string;
  column: string;
  p50: number;
  p95: number;
  n: number;
  stepP50: Record<string, number>;
}

/**
 * The ramp (--ramp): `n` rounds in which every column makes one sandbox, kept running (in `kept`, which the caller
 * stops); answers each column's figures per bucket of create numbers.
 */
async function measureRamp(columns: Column[], n: number, kept: Started[]): Promise<RampResult[]> {
  const times: number[][] = columns.map(() => []);
  const steps: Array<Array<Record<string, number>>> = columns.map(() => []);
  for (let i = 0; i < n; i++) {
    const available = memAvailableKB() / 1024;
    if (available < RAMP_MIN_AVAILABLE_MIB)
      throw new Error(
        `MemAvailable fell to ${Math.round(available)} MiB after ${i} rounds (the ramp stops below ${RAMP_MIN_AVAILABLE_MIB}); ramp fewer`,
      );
    for (const [k, c] of columns.entries()) {
      const s = await c.start(`r${k}x${i}`);
      kept.push(s);
      times[k]!.push(s.readyMs);
      steps[k]!.push(s.steps ?? {});
    }
    if ((i + 1) % 20 === 0) log(`ramp: ${i + 1} of ${n} sandboxes per column`);
  }
  return rampBuckets(n).flatMap((b) =>
    columns.map((c, k) => {
      const sorted = times[k]!.slice(b.from, b.to).sort((x, y) => x - y);
      const bySteps: Record<string, number[]> = {};
      for (const sample of steps[k]!.slice(b.from, b.to)) for (const [name, ms] of Object.entries(sample)) (bySteps[name] ??= []).push(ms);
      return {
        bucket: b.label,
        column: c.name,
        p50: percentile(sorted, 0.5),
        p95: percentile(sorted, 0.95),
        n: sorted.length,
        stepP50: p50Steps(bySteps),
      };
    }),
  );
}

/** The ramp's table: each column's p50 / p95 per bucket with its ratio to its own first bucket, then the steps. */
function printRamp(runtime: string, n: number, columns: Column[], results: RampResult[]): void {
  const buckets = [...new Set(results.map((r) => r.bucket))];
  const cell = (bucket: string, k: number) => results.find((r) => r.bucket === bucket && r.column === columns[k]!.name)!;
  const growth = (k: number) => cell(buckets.at(-1)!, k).p50 / cell(buckets[0]!, k).p50;
  console.log(
    `\nsandbox start, ${runtime}, a ramp of ${n} sandboxes per column, all kept running (create -> first successful agent call)\n`,
  );
  console.log(`| creates (per column) | ${columns.map((c) => `${c.name} p50 / p95 (p50 / its first)`).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---|').join('')}`);
  for (const b of buckets)
    console.log(
      `| ${b} | ${columns
        .map((_, k) => {
          const r = cell(b, k);
          return `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)} ms (${(r.p50 / cell(buckets[0]!, k).p50).toFixed(2)}x)`;
        })
        .join(' | ')} |`,
    );
  // Columns 0-2 are kit, floor and api (main's order).
  console.log(
    `\nlast bucket / first, p50: ${columns.map((c, k) => `${c.name.split(' ')[0]} ${growth(k).toFixed(2)}x`).join(', ')}; ` +
      `the api's growth over the floor's ${(growth(2) / growth(1)).toFixed(2)}x, the kit's ${(growth(0) / growth(1)).toFixed(2)}x`,
  );
  console.log('\nsteps of each create, p50 ms each (see Started.steps)\n\n| creates | column | steps |\n|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.bucket} | ${r.column} | ${Object.entries(r.stepP50)
        .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
        .join(', ')} |`,
    );
}

/** A container's memory cgroup usage (v1 memory.usage_in_bytes or v2 memory.current), found from its init pid. */
function memcgUsageBytes(pid: number): number {
  for (const line of fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const [, ctrls, rel] = line.split(':');
    if (rel === undefined) continue;
    if (ctrls!.split(',').includes('memory')) return Number(fs.readFileSync(`/sys/fs/cgroup/memory${rel}/memory.usage_in_bytes`, 'utf8'));
    if (ctrls === '' && fs.existsSync(`/sys/fs/cgroup${rel}/memory.current`))
      return Number(fs.readFileSync(`/sys/fs/cgroup${rel}/memory.current`, 'utf8'));
  }
  return NaN;
}

function memAvailableKB(): number {
  return Number(/MemAvailable:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))![1]);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      samples: { type: 'string', default: '50' },
      levels: { type: 'string', default: '1,10,50' },
      runtime: { type: 'string', default: 'auto' },
      pool: { type: 'string', default: '2' },
      'floor-hardening': { type: 'string', default: 'on' },
      'baseline-agent': { type: 'string' },
      ramp: { type: 'string' },
      subnet: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const samples = Number(values.samples);
  const levels = values.levels!.split(',').map(Number);
  const poolSize = Number(values.pool);
  const ramp = values.ramp === undefined ? undefined : Number(values.ramp);
  if (
    !Number.isInteger(samples) ||
    samples < 2 ||
    levels.some((l) => !Number.isInteger(l) || l < 0) ||
    !Number.isInteger(poolSize) ||
    poolSize < 0 ||
    poolSize > 64 ||
    !['on', 'off'].includes(values['floor-hardening']!) ||
    (ramp !== undefined && (!Number.isInteger(ramp) || ramp < 3))
  ) {
    console.error(
      'sandbox-start: --samples must be an integer >= 2, --levels a comma list of integers >= 0, --pool an integer from 0 to 64, --floor-hardening on or off and --ramp an integer >= 3',
    );
    return 2;
  }
  // A ramp keeps every column's sandboxes on one subnet: kit, floor, api and the baseline's, and the warm-up's.
  const subnet = values.subnet ?? (ramp === undefined ? undefined : RAMP_SUBNET);
  const rampColumns = values['baseline-agent'] === undefined ? 3 : 4;
  if (ramp !== undefined && subnet !== undefined && subnetHosts(subnet) < ramp * rampColumns + 2) {
    console.error(
      `sandbox-start: --subnet ${subnet} holds ${subnetHosts(subnet)} sandboxes; a ramp of ${ramp} over ${rampColumns} columns needs ${ramp * rampColumns + 2}`,
    );
    return 2;
  }
  const instance = `bench${randomBytes(2).toString('hex')}`;
  log(`instance ${instance}; base rootfs and agent bundle`);
  const rootfs = await new MmdebstrapImages().rootfs('debian:bookworm', (l) => log(l));
  await bundle(bundleEntries().find((e) => e.name === 'agent')!);
  // A bad --baseline-agent is said before anything is made (nothing to clean up).
  const baselineAgent =
    values['baseline-agent'] === undefined ? undefined : { ...defaultAgentPayload(), bundleDir: path.resolve(values['baseline-agent']) };
  if (baselineAgent) checkAgentPayload(baselineAgent);
  const scratch = fs.mkdtempSync('/var/tmp/sk-bench-start-');
  // Host commands start from the spawn helper, as the platform's do (startPlatformOnHost): every column's, the floor's too.
  const releaseSpawnHelper = useSpawnHelper();
  if (!releaseSpawnHelper) log('the spawn helper is not built: host commands start from this process');
  const net = await createSandboxHostNetwork(instance, subnet === undefined ? {} : { subnet });
  // The kit's network: the same bridge and names, with its steps timed.
  const kitNetwork = new BridgeNetwork({ ...(net.network as unknown as BridgeNetwork).options, times: createSteps.times });
  // Room for the most sandboxes one runtime keeps at once: the largest level and a measured one beside it, or a ramp.
  const admission = admissionFor(ramp ?? Math.max(...levels) + 1);
  const rt = createOciRuntime({
    instance,
    runtime: values.runtime as RuntimeChoice,
    stateRoot: path.join(scratch, 'state'),
    dataRoot: path.join(scratch, 'data'),
    network: kitNetwork,
    times: createSteps.times,
    admission,
  });
  const env: Env = {
    rootfs,
    floorHardened: values['floor-hardening'] === 'on',
    net: { ...net, network: kitNetwork },
    rt,
    scratch,
    admission,
  };
  const columns: Column[] = [kitColumn(env), await floorColumn(env)];
  const baselineRoots = { stateRoot: path.join(scratch, 'state-b'), dataRoot: path.join(scratch, 'data-b') };
  const baselineRt =
    baselineAgent === undefined
      ? undefined
      : createOciRuntime({
          instance: `${instance}b`,
          runtime: values.runtime as RuntimeChoice,
          ...baselineRoots,
          network: kitNetwork,
          times: createSteps.times,
          agent: baselineAgent,
          admission,
        });
  const baseline = baselineRt && kitColumn(env, baselineRt, `kit, baseline agent (${values['baseline-agent']})`);
  let api: Awaited<ReturnType<typeof apiColumn>> | undefined;
  let pooled: Awaited<ReturnType<typeof apiColumn>> | undefined;
  const background: string[] = [];
  const backgroundPids: number[] = [];
  const results: Array<{ running: number; column: string; p50: number; p95: number; n: number; stepP50?: Record<string, number> }> = [];
  let memPerSandboxKB: number | undefined;
  let memcgPerSandboxKB: number | undefined;
  // A ramp's sandboxes, stopped once it is measured (or failed).
  const kept: Started[] = [];
  let rampResults: RampResult[] = [];
  try {
    api = await apiColumn(env, `${instance}p`, values.runtime as RuntimeChoice);
    columns.push(api);
    if (poolSize > 0 && ramp === undefined) {
      pooled = await apiColumn(env, `${instance}w`, values.runtime as RuntimeChoice, poolSize);
      columns.push(pooled);
    }
    if (baseline) columns.push(baseline);
    log(`runtime ${rt.name}; warming up each column once`);
    for (const c of columns) await (await c.start(`warm${columns.indexOf(c)}`)).stop();
    if (ramp !== undefined) rampResults = await measureRamp(columns, ramp, kept);
    const memBefore = memAvailableKB();
    for (const level of ramp === undefined ? levels : []) {
      while (background.length < level) {
        const id = `bg${background.length}`;
        const network = await net.network.attach(id);
        const status = await rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 512, cpuCount: 1, network });
        await until204(network.address);
        background.push(id);
        backgroundPids.push(status.pid!);
      }
      if (level === Math.max(...levels) && level > 0) {
        await new Promise((r) => setTimeout(r, 3000));
        memPerSandboxKB = (memBefore - memAvailableKB()) / level;
        memcgPerSandboxKB = backgroundPids.reduce((sum, pid) => sum + memcgUsageBytes(pid), 0) / 1024 / level;
      }
      // Columns take turns sample by sample, so a load change on this shared machine hits every column alike.
      const times: number[][] = columns.map(() => []);
      const steps: Array<Record<string, number[]>> = columns.map(() => ({}));
      for (let i = 0; i < samples; i++) {
        for (const [k, c] of columns.entries()) {
          const s = await c.start(`m${level}x${k}x${i}`);
          times[k]!.push(s.readyMs);
          for (const [name, ms] of Object.entries(s.steps ?? {})) (steps[k]![name] ??= []).push(ms);
          await s.stop();
        }
      }
      for (const [k, c] of columns.entries()) {
        const sorted = times[k]!.sort((a, b) => a - b);
        const row = { running: level, column: c.name, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), n: samples };
        const stepP50 = p50Steps(steps[k]!);
        results.push({ ...row, ...(Object.keys(stepP50).length > 0 ? { stepP50 } : {}) });
        const stepText = Object.entries(stepP50)
          .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
          .join(', ');
        log(
          `${level} running, ${c.name}: p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)} ms${stepText ? ` (steps, p50 ms: ${stepText})` : ''}`,
        );
      }
    }
  } finally {
    log('cleaning up');
    for (const s of kept.reverse()) await s.stop().catch((err: Error) => log(`a ramp's sandbox: ${err.message}`));
    await pooled?.close();
    await api?.close();
    if (baselineRt) await cleanupLeftovers({ instance: `${instance}b`, ...baselineRoots, network: net.network });
    await cleanupLeftovers({
      instance,
      stateRoot: path.join(scratch, 'state'),
      dataRoot: path.join(scratch, 'data'),
      network: net.network,
    });
    removeCgroup(`sandbox-kit-${instance}-floor`);
    await net.close();
    fs.rmSync(scratch, { recursive: true, force: true });
    await releaseSpawnHelper?.();
  }

  if (ramp !== undefined) {
    printRamp(rt.name, ramp, columns, rampResults);
    if (values.json) fs.writeFileSync(values.json, JSON.stringify({ runtime: rt.name, ramp, results: rampResults }, null, 2));
    return 0;
  }
  console.log(`\nsandbox start, ${rt.name}, ${samples} samples per cell (create -> first successful agent call)\n`);
  const poolRatio = pooled ? ' pool / api (p50, p95) |' : '';
  const baselineRatio = baseline ? ' kit / baseline kit (p50, p95) |' : '';
  console.log(
    '| already running | ' +
      columns.map((c) => `${c.name} p50 / p95`).join(' | ') +
      ' | kit / floor (p50) | api / floor (p50, p95) |' +
      poolRatio +
      baselineRatio,
  );
  console.log('|---|' + columns.map(() => '---|').join('') + '---|---|' + (pooled ? '---|' : '') + (baseline ? '---|' : ''));
  for (const level of levels) {
    const row = results.filter((r) => r.running === level);
    const cell = (c: Column | undefined) => row.find((r) => r.column === c?.name);
    const [kit, floor, viaApi, viaPool, base] = [row[0]!, row[1]!, row[2]!, cell(pooled), cell(baseline)];
    console.log(
      `| ${level} | ` +
        row.map((r) => `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)} ms`).join(' | ') +
        ` | ${(kit.p50 / floor.p50).toFixed(2)}x | ${(viaApi.p50 / floor.p50).toFixed(2)}x, ${(viaApi.p95 / floor.p95).toFixed(2)}x |` +
        (viaPool ? ` ${(viaPool.p50 / viaApi.p50).toFixed(2)}x, ${(viaPool.p95 / viaApi.p95).toFixed(2)}x |` : '') +
        (base ? ` ${(kit.p50 / base.p50).toFixed(2)}x, ${(kit.p95 / base.p95).toFixed(2)}x |` : ''),
    );
  }
  const stepped = results.filter((r) => r.stepP50 !== undefined);
  if (stepped.length > 0) {
    console.log('\nsteps of each sample, p50 ms each (see Started.steps)\n\n| already running | column | steps |');
    console.log('|---|---|---|');
    for (const r of stepped) {
      const text = Object.entries(r.stepP50!)
        .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
        .join(', ');
      console.log(`| ${r.running} | ${r.column} | ${text} |`);
    }
  }
  if (memPerSandboxKB !== undefined) {
    console.log(
      `\nidle memory per sandbox, ${Math.max(...levels)} running: MemAvailable drop / N ${(memPerSandboxKB / 1024).toFixed(1)} MiB; memory cgroup usage (anonymous + the sandbox's own page cache) ${((memcgPerSandboxKB ?? NaN) / 1024).toFixed(1)} MiB`,
    );
  }
  if (values.json)
    fs.writeFileSync(values.json, JSON.stringify({ runtime: rt.name, samples, results, memPerSandboxKB, memcgPerSandboxKB }, null, 2));
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`sandbox-start: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
