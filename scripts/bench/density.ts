/**
 * Density: N idle sandboxes on one host, created one after another through the API with the unmodified E2B SDK
 * (`Sandbox.create('base')`, then one agent call through the gateway: a Stat of /). The platform and the gateway
 * run as the CLI runs them on a sandbox host, each a process of its own (`sandbox-kit platform` with a Redis catalog,
 * `sandbox-kit gateway` on that catalog), so their own memory and CPU are measured apart.
 *
 * Printed: p50 of create (SDK call until it returns) and of create -> first call per bucket of sandbox numbers (1-20,
 * 81-100 of 200 (the 20 ending at N - 100), the last 20; each a ratio to the first bucket), with the platform's CPU
 * time per create in each bucket and the whole host's, busy and stolen by the hypervisor, and the part of it the
 * kernel's DAMON threads took where the host runs DAMON (means: /proc counts in clock ticks); the first bucket again
 * once all N were killed ("again", with the last bucket's ratio to it: what changed on the host meanwhile, the run's
 * drift or what the N sandboxes left behind, shows as its difference from the first); the platform's and the gateway's
 * RSS and CPU (per cent of one core over an idle window) with no sandbox and with N idle ones; host memory per idle
 * sandbox (the sandboxes' memory cgroups' charge, summed, / N; and the drop of MemAvailable / N, which also counts the
 * kernel's network namespaces, loop devices and page cache, and moves with whatever else runs on the host); the agent's
 * idle memory (per sandbox, the median of its RSS and of its anonymous part); and per bucket, the p50 of each step of
 * create as the platform logged it (network, container, agent, init, store+catalog). The run stops with an error when
 * the host's MemAvailable falls below --min-available-mib (a shared host). Every sandbox is killed through the API at
 * the end, also when the run fails, then both processes are stopped and the state directory removed. Root only; one
 * link into the root network namespace (the standalone network).
 *
 *   node dist/scripts/bench/density.js [--sandboxes 200] [--idle-seconds 10] [--subnet 10.235.0.0/23]
 *     [--min-available-mib 3072] [--json FILE]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Sandbox } from 'e2b';
import { freePort } from '../../test/helpers/free-port';
import { cgroupDirs } from '../../src/runtime/cgroups';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { reopenSandboxHostNetwork } from '../../src/runtime/network/host-network';
import { admissionFor } from './bench-admission';
import { rampBuckets } from './ramp-buckets';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const MiB = 1024 * 1024;
const CLK_TCK = 100;

function log(msg: string): void {
  process.stderr.write(`density: ${msg}\n`);
}

/** Kills the sandboxes through the API, one after another (a failure is logged: the run's end kills what is left). */
async function killAll(api: { url: string; key: string }, ids: Iterable<string>): Promise<void> {
  for (const id of [...ids]) {
    await fetch(`${api.url}/sandboxes/${id}`, { method: 'DELETE', headers: { 'x-api-key': api.key } }).catch((err: Error) =>
      log(`kill ${id}: ${err.message}`),
    );
    live.delete(id);
  }
}

/** The sandboxes this run made and has not killed yet (the run's end kills them, with any the platform lists). */
const live = new Set<string>();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor((s.length - 1) / 2)]!;
}

function mean(xs: number[]): number {
  return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Starts a process and waits for a line of its output matching `ready`; answers the process and the match. */
async function startProcess(
  name: string,
  argv: string[],
  ready: RegExp,
  logFile: string,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const out = fs.createWriteStream(logFile);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready after 120 s; its log: ${logFile}`)), 120_000);
    const onData = (d: Buffer) => {
      out.write(d);
      text += d.toString();
      const m = ready.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}; its log: ${logFile}`));
    });
  });
  // Keep draining its output into the log.
  return { child, match };
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** RSS (MiB) and CPU time (seconds) of a process and its children that are not sandboxes (none here but redis). */
function procUsage(pid: number): { rssMiB: number; cpuSeconds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  // Fields after the command's closing parenthesis: utime is the 12th, stime the 13th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMiB: rss, cpuSeconds: (Number(fields[11]) + Number(fields[12])) / CLK_TCK };
}

/**
 * The host's CPU time so far (ms, all CPUs, from /proc/stat's first line): busy (user, nice, system, irq, softirq) and
 * steal (time the hypervisor ran something else while this guest wanted the CPU).
 */
function hostCpuMs(stat: string): { busy: number; steal: number } {
  const fields = (/^cpu\s+(.*)$/m.exec(stat)?.[1] ?? '').trim().split(/\s+/).map(Number);
  if (fields.length < 8 || fields.some((f) => !Number.isFinite(f))) throw new Error(`not /proc/stat's cpu line: ${stat.slice(0, 80)}`);
  const [user, nice, system, , , irq, softirq, steal] = fields as [number, number, number, number, number, number, number, number];
  return { busy: ((user + nice + system + irq + softirq) * 1000) / CLK_TCK, steal: (steal * 1000) / CLK_TCK };
}

/**
 * The pids of the kernel's DAMON threads (`kdamond.N`), which watch which memory is used (docs/platform.md, "What else
 * runs while a host fills up"); none where the host does not run DAMON.
 */
function kdamondPids(): number[] {
  return fs.readdirSync('/proc').flatMap((d) => {
    if (!/^\d+$/.test(d)) return [];
    try {
      return /^kdamond/.test(fs.readFileSync(`/proc/${d}/comm`, 'utf8')) ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

/** The CPU time (ms) the processes `pids` have had so far; one that is gone counts 0. */
function cpuMsOf(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      return sum + procUsage(pid).cpuSeconds * 1000;
    } catch {
      return sum;
    }
  }, 0);
}

interface ProcFigures {
  rssMiB: number;
  /** Per cent of one core while idle. */
  idleCpuPct: number;
}

/** Each process's RSS now and its CPU over an idle window of `seconds`. */
async function idleFigures(pids: Record<string, number>, seconds: number): Promise<Record<string, ProcFigures>> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, procUsage(pid)]));
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const wall = (performance.now() - t0) / 1000;
  return Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => {
      const after = procUsage(pid);
      return [k, { rssMiB: round(after.rssMiB), idleCpuPct: round((100 * (after.cpuSeconds - before[k]!.cpuSeconds)) / wall, 2) }];
    }),
  );
}

function memAvailableMiB(): number {
  return Number(/^MemAvailable:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024;
}

/** The sandbox's memory cgroup directory and its charge file (cgroup v2 or v1), or undefined when it has none. */
function memoryCgroup(instance: string, sandboxID: string): { dir: string; charge: string } | undefined {
  for (const dir of cgroupDirs(`sandbox-kit-${instance}/${sandboxID}`))
    for (const charge of ['memory.current', 'memory.usage_in_bytes'])
      if (fs.existsSync(path.join(dir, charge))) return { dir, charge: path.join(dir, charge) };
  return undefined;
}

interface AgentIdle {
  chargeMiB: number;
  agentRssMiB: number;
  agentAnonMiB: number;
}

/** Each sandbox's memory cgroup charge, and its agent's RSS and anonymous RSS. */
function sandboxMemory(instance: string, ids: string[]): AgentIdle[] {
  const out: AgentIdle[] = [];
  for (const id of ids) {
    const cg = memoryCgroup(instance, id);
    if (!cg) continue;
    const dir = cg.dir;
    let charge = 0;
    try {
      charge = Number(fs.readFileSync(cg.charge, 'utf8')) / MiB;
    } catch {
      continue;
    }
    let rss = 0;
    let anon = 0;
    const procs = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    for (const pid of procs) {
      try {
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (!cmdline.includes('agent')) continue;
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
        anon = Number(/^RssAnon:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
      } catch {
        // gone meanwhile
      }
    }
    out.push({ chargeMiB: charge, agentRssMiB: rss, agentAnonMiB: anon });
  }
  return out;
}

/**
 * Each sandbox's create steps as the platform logged them ("sandbox ID running (template base, ready in 185 ms:
 * network 5, container 99, agent 74, init 4, store+catalog 2)"), by sandbox ID.
 */
function readyStepsFromLog(text: string): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const m of text.matchAll(/sandbox (\S+) running \([^)]*?ready in \d+ ms: ([^)]*)\)/g)) {
    const steps: Record<string, number> = {};
    for (const part of m[2]!.split(', ')) {
      const at = part.lastIndexOf(' ');
      steps[part.slice(0, at)] = Number(part.slice(at + 1));
    }
    out.set(m[1]!, steps);
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sandboxes: { type: 'string', default: '200' },
      'idle-seconds': { type: 'string', default: '10' },
      subnet: { type: 'string', default: '10.235.0.0/23' },
      'min-available-mib': { type: 'string', default: '3072' },
      json: { type: 'string' },
    },
  });
  const n = Number(values.sandboxes);
  const idleSeconds = Number(values['idle-seconds']);
  if (!Number.isInteger(n) || n < 3) throw new Error('--sandboxes: a whole number of at least 3');
  if (process.getuid?.() !== 0) throw new Error('run as root (the platform makes network namespaces and containers)');
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: npm run build`);

  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-density-'));
  const children: ChildProcess[] = [];
  const created: string[] = [];
  let api: { url: string; key: string } | undefined;
  let instance: string | undefined;
  try {
    const redisPort = await freePort();
    const redisDir = path.join(stateDir, 'redis');
    fs.mkdirSync(redisDir);
    const redis = await startProcess(
      'redis-server',
      ['redis-server', '--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', redisDir],
      /Ready to accept connections/,
      path.join(stateDir, 'redis.log'),
    );
    children.push(redis.child);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    const admission = admissionFor(n);
    const platform = await startProcess(
      'platform',
      [
        process.execPath,
        CLI,
        'platform',
        '--state-dir',
        path.join(stateDir, 'platform'),
        '--redis',
        redisUrl,
        '--catalog',
        redisUrl,
        '--sandbox-subnet',
        values.subnet as string,
        // N sandboxes of 512 MB and 1 CPU each must fit the host's admission (they idle far below it).
        '--memory-overcommit',
        String(admission.memoryOvercommit),
        '--cpu-overcommit',
        String(admission.cpuOvercommit),
      ],
      /platform API listening on (http:\/\/\S+)/,
      path.join(stateDir, 'platform.log'),
    );
    children.push(platform.child);
    instance = /instance (\S+)/.exec(fs.readFileSync(path.join(stateDir, 'platform.log'), 'utf8'))?.[1];
    const gateway = await startProcess(
      'gateway',
      [process.execPath, CLI, 'gateway', '--catalog', redisUrl, '--host', '127.0.0.1', '--port', '0'],
      /listening on \S+?:(\d+)/,
      path.join(stateDir, 'gateway.log'),
    );
    children.push(gateway.child);
    api = {
      url: platform.match[1]!,
      key: fs
        .readFileSync(path.join(stateDir, 'platform', 'api-key'), 'utf8')
        .trim()
        .split('\n')[0]!,
    };
    const sandboxUrl = `http://127.0.0.1:${gateway.match[1]}`;
    const opts = { apiKey: api.key, apiUrl: api.url, sandboxUrl, timeoutMs: 3 * 3600_000 };
    const pids = { platform: platform.child.pid!, gateway: gateway.child.pid! };
    log(`platform ${api.url} (instance ${instance}), gateway ${sandboxUrl}; ${n} sandboxes`);

    // A first create and kill warms the base image and the caches: what is measured is the steady path.
    const warm = await Sandbox.create('base', opts);
    await warm.files.list('/');
    await warm.kill();
    const startFigures = await idleFigures(pids, idleSeconds);
    const availBefore = memAvailableMiB();
    log(`no sandbox: ${JSON.stringify(startFigures)}`);

    const createMs: number[] = [];
    const firstCallMs: number[] = [];
    // The platform's CPU time over each create (in clock ticks: a bucket's mean, not one create's, is the figure).
    const platformCpuMs: number[] = [];
    // The whole host's CPU over each create, busy and stolen (the same: a bucket's mean is the figure).
    const hostBusyMs: number[] = [];
    const hostStealMs: number[] = [];
    const damon = kdamondPids();
    const damonMs: number[] = [];
    const floorMiB = Number(values['min-available-mib']);
    for (let i = 0; i < n; i++) {
      // A shared host: stop before its memory runs out, and say so.
      if (memAvailableMiB() < floorMiB) throw new Error(`MemAvailable fell below ${floorMiB} MiB after ${i} sandboxes; run fewer`);
      const cpu0 = procUsage(pids.platform).cpuSeconds;
      const host0 = hostCpuMs(fs.readFileSync('/proc/stat', 'utf8'));
      const damon0 = cpuMsOf(damon);
      const t0 = performance.now();
      const sbx = await Sandbox.create('base', opts);
      const t1 = performance.now();
      live.add(sbx.sandboxId);
      platformCpuMs.push((procUsage(pids.platform).cpuSeconds - cpu0) * 1000);
      const host1 = hostCpuMs(fs.readFileSync('/proc/stat', 'utf8'));
      hostBusyMs.push(host1.busy - host0.busy);
      hostStealMs.push(host1.steal - host0.steal);
      damonMs.push(cpuMsOf(damon) - damon0);
      created.push(sbx.sandboxId);
      await sbx.files.list('/');
      const t2 = performance.now();
      createMs.push(t1 - t0);
      firstCallMs.push(t2 - t0);
      if ((i + 1) % 20 === 0)
        log(`${i + 1} sandboxes; the last create ${Math.round(t1 - t0)} ms, MemAvailable ${Math.round(memAvailableMiB())} MiB`);
    }
    // Let them settle into idle before they are measured.
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const endFigures = await idleFigures(pids, idleSeconds);
    const availAfter = memAvailableMiB();
    const perSandbox = instance ? sandboxMemory(instance, created) : [];
    const buckets = rampBuckets(n);
    const size = buckets[0]!.to;

    // The first bucket again, minutes later: all N killed, then `size` creates one after another (killed after).
    // Set beside the first bucket, it shows what changed on the host meanwhile (its load, or what N sandboxes left
    // behind), which the ratio of the last bucket to the first would count as the cost of density.
    log(`killing the ${n} sandboxes; then ${size} creates again`);
    await killAll(api, created);
    const againMs: number[] = [];
    const again: string[] = [];
    for (let i = 0; i < size; i++) {
      const t0 = performance.now();
      const sbx = await Sandbox.create('base', opts);
      againMs.push(performance.now() - t0);
      live.add(sbx.sandboxId);
      again.push(sbx.sandboxId);
    }
    await killAll(api, again);

    const first = median(createMs.slice(buckets[0]!.from, buckets[0]!.to));
    const firstCall = median(firstCallMs.slice(buckets[0]!.from, buckets[0]!.to));
    const rows = buckets.map((b) => {
      const c = median(createMs.slice(b.from, b.to));
      const f = median(firstCallMs.slice(b.from, b.to));
      return {
        sandboxes: b.label,
        createP50Ms: round(c),
        createRatio: round(c / first, 2),
        firstCallP50Ms: round(f),
        firstCallRatio: round(f / firstCall, 2),
        platformCpuMsPerCreate: round(mean(platformCpuMs.slice(b.from, b.to))),
        hostCpuMsPerCreate: round(mean(hostBusyMs.slice(b.from, b.to))),
        hostStealMsPerCreate: round(mean(hostStealMs.slice(b.from, b.to)), 1),
        damonCpuMsPerCreate: damon.length > 0 ? round(mean(damonMs.slice(b.from, b.to)), 1) : null,
      };
    });
    // Where each bucket's create time went inside the platform (its own log of every create's steps).
    const logged = readyStepsFromLog(fs.readFileSync(path.join(stateDir, 'platform.log'), 'utf8'));
    const platformSteps = buckets.map((b) => {
      const steps = created.slice(b.from, b.to).flatMap((id) => (logged.has(id) ? [logged.get(id)!] : []));
      const names = [...new Set(steps.flatMap((s) => Object.keys(s)))];
      return { sandboxes: b.label, p50Ms: Object.fromEntries(names.map((k) => [k, round(median(steps.flatMap((s) => s[k] ?? [])))])) };
    });
    const charge = perSandbox.map((s) => s.chargeMiB);
    const result = {
      sandboxes: n,
      host: { cpus: os.cpus().length, memoryMiB: Math.round(os.totalmem() / MiB), loadavg: os.loadavg().map((x) => round(x, 2)) },
      create: rows,
      platformSteps,
      again: {
        createP50Ms: round(median(againMs)),
        lastBucketRatio: round(median(createMs.slice(n - size, n)) / median(againMs), 2),
      },
      processes: Object.fromEntries(
        Object.keys(pids).map((k) => [
          k,
          {
            start: startFigures[k],
            end: endFigures[k],
            rssRatio: round(endFigures[k]!.rssMiB / startFigures[k]!.rssMiB, 2),
          },
        ]),
      ),
      perIdleSandbox: {
        measured: perSandbox.length,
        memcgMiB: round(charge.reduce((a, b) => a + b, 0) / Math.max(1, charge.length)),
        memcgMedianMiB: round(median(charge)),
        memAvailableDropMiB: round((availBefore - availAfter) / n),
        goalMiB: 15,
      },
      agentIdle: {
        rssMedianMiB: round(median(perSandbox.map((s) => s.agentRssMiB))),
        anonMedianMiB: round(median(perSandbox.map((s) => s.agentAnonMiB))),
      },
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`\ncreate p50 by sandbox number (SDK Sandbox.create; then a first call through the gateway):`);
    for (const r of rows)
      console.log(
        `  ${r.sandboxes.padEnd(9)} create ${r.createP50Ms} ms (${r.createRatio}x)  create+first call ${r.firstCallP50Ms} ms (${r.firstCallRatio}x)  platform CPU ${r.platformCpuMsPerCreate} ms per create, host CPU ${r.hostCpuMsPerCreate} (stolen ${r.hostStealMsPerCreate}${r.damonCpuMsPerCreate === null ? '' : `, DAMON ${r.damonCpuMsPerCreate}`})`,
      );
    console.log(
      `  again     create ${result.again.createP50Ms} ms (${round(result.again.createP50Ms / first, 2)}x): 1-${size} once all ${n} were killed; the last bucket is ${result.again.lastBucketRatio}x of it`,
    );
    console.log(`platform's create steps, p50 (ms) by sandbox number:`);
    for (const r of platformSteps)
      console.log(
        `  ${r.sandboxes.padEnd(9)} ${Object.entries(r.p50Ms)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    for (const [k, v] of Object.entries(result.processes))
      console.log(
        `  ${k}: RSS ${v.start!.rssMiB} -> ${v.end!.rssMiB} MiB (${v.rssRatio}x), idle CPU ${v.start!.idleCpuPct}% -> ${v.end!.idleCpuPct}% of a core`,
      );
    console.log(
      `  per idle sandbox: memcg ${result.perIdleSandbox.memcgMiB} MiB (median ${result.perIdleSandbox.memcgMedianMiB}; goal 15), MemAvailable drop ${result.perIdleSandbox.memAvailableDropMiB} MiB; agent RSS ${result.agentIdle.rssMedianMiB} MiB (anonymous ${result.agentIdle.anonMedianMiB})`,
    );
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    if (api) {
      const key = api.key;
      const url = api.url;
      // Every sandbox of this platform, the ones a failed run left included.
      const listed = await fetch(`${url}/sandboxes`, { headers: { 'x-api-key': key } })
        .then((r) => r.json() as Promise<Array<{ sandboxID: string }>>)
        .catch(() => [] as Array<{ sandboxID: string }>);
      const ids = new Set([...live, ...listed.map((s) => s.sandboxID)]);
      log(`killing ${ids.size} sandboxes`);
      await killAll(api, ids);
    }
    for (const child of children.reverse()) await stopProcess(child);
    // A stopped platform leaves its standalone network and runtime state for its next start: removed here.
    if (instance) {
      const left = await reopenSandboxHostNetwork(instance).catch(() => undefined);
      const report = await cleanupLeftovers({
        instance,
        dataRoot: path.join(stateDir, 'platform', 'runtime'),
        ...(left ? { network: left.network } : {}),
      });
      await left?.close();
      const removed = Object.values(report).flat().length;
      if (removed > 0) log(`removed what the platform left: ${JSON.stringify(report)}`);
    }
    // The runtime's data directory stays a shared mount of its own after the platform stops (sandbox-disk.ts).
    const mounts = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4])
      .filter((m): m is string => m?.startsWith(`${stateDir}/`) === true)
      .reverse();
    for (const m of mounts) spawnSync('umount', [m]);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`density: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
