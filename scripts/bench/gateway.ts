/**
 * Gateway benchmark: the same Stat workload (wrk, 32 connections) sent straight to the agent, through the
 * gateway, and through nginx routing by the same header to the same agent. Reports requests/s and p50/p99
 * for the three, the CPU time per request of the proxy (gateway or nginx) and of the agent, and the
 * gateway/nginx ratios. Rounds rotate the order so drift and each place in the order hit every target alike: use a
 * number of rounds that is a multiple of the number of targets (3, or 4 with a baseline).
 *
 * With `--workers N` the gateway runs N processes (`sandbox-kit gateway --workers N`) and nginx as many worker
 * processes; CPU time is then the sum over each proxy's processes.
 *
 * With `--baseline-cli PATH` (the `dist/src/cli/main.js` of another build) a second gateway from that build is
 * measured in the same rounds (`baseline`), so a change to the data path is reported against its own previous
 * version and nginx in one run.
 *
 * With `--cpu-profile-dir DIR` the gateway (this build's) writes a V8 CPU profile there when it stops
 * (`node --cpu-prof`), to be read with any `.cpuprofile` viewer.
 *
 *   node dist/scripts/bench/gateway.js [--seconds 8] [--warmup 2] [--rounds 3] [--connections 32] [--workers 1] [--baseline-cli PATH] [--cpu-profile-dir DIR] [--json FILE]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { brandNames } from '../../src/contract/brand';
import { freePort } from '../../test/helpers/free-port';
import { startNginx } from './gateway-nginx';
import { runWrk, type LoadResult } from './gateway-wrk';

const CLI = resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');
const SANDBOX_ID = 'benchsandbox';
const TOKEN = 'bench-access-token';
const ALL_TARGETS = ['direct', 'gateway', 'baseline', 'nginx'] as const;
type Target = (typeof ALL_TARGETS)[number];

const children: ChildProcess[] = [];

/** Clock ticks per second of /proc/PID/stat (getconf CLK_TCK; 100 on Linux when getconf is missing). */
function clockTicks(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/** A process and its descendants, from /proc (a multi-process proxy is measured as a whole). */
function processTree(pid: number): number[] {
  let kids: number[] = [];
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    kids = text === '' ? [] : text.split(/\s+/).map(Number);
  } catch {
    // Gone, or no /proc: just the process itself.
  }
  return [pid, ...kids.flatMap(processTree)];
}

/** CPU seconds (user + system) a process and its descendants have used so far, from /proc; NaN without /proc. */
function cpuSeconds(pid: number | undefined, ticks: number): number {
  if (pid === undefined) return NaN;
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      if (p === pid) return NaN;
    }
  }
  return total;
}

/** Starts a sandbox-kit command and waits for its "<what> listening on HOST:PORT" line. */
function startCli(args: string[], what: string, cli = CLI, nodeFlags: string[] = []): Promise<{ port: number; pid: number | undefined }> {
  const child = spawn(process.execPath, [...nodeFlags, cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${what} did not start:\n${output}`)), 15_000);
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
      const m = new RegExp(`${what} listening on \\S+:(\\d+)`).exec(output);
      if (m) {
        clearTimeout(timer);
        res({ port: Number(m[1]), pid: child.pid });
      }
    });
    child.once('exit', (code) => rej(new Error(`${what} exited with ${code}:\n${output}`)));
  });
}

/** One Stat call, to check a route answers 200 before it is measured. */
function statOnce(port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((res, rej) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/filesystem.Filesystem/Stat', headers, agent: false }, (r) => {
      r.resume();
      r.on('end', () => res(r.statusCode ?? 0));
    });
    req.on('error', rej);
    req.end(body);
  });
}

async function waitFor200(port: number, headers: Record<string, string>, body: string, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const status = await statOnce(port, headers, body);
      if (status === 200) return;
      last = `HTTP ${status}`;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} does not answer Stat with 200: ${String(last)}`);
}

const fmtUs = (us: number) => (Number.isNaN(us) ? '-' : us.toFixed(0));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '32' },
      threads: { type: 'string', default: '1' },
      workers: { type: 'string', default: '1' },
      json: { type: 'string' },
      'baseline-cli': { type: 'string' },
      'cpu-profile-dir': { type: 'string' },
    },
    strict: true,
  });
  const seconds = Number(values.seconds);
  const warmup = Number(values.warmup);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const threads = Number(values.threads);
  const workers = Number(values.workers);
  for (const [name, v] of Object.entries({ seconds, rounds, connections, threads, workers })) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  }
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error('--warmup must be a non-negative integer');

  const dir = await mkdtemp(join(tmpdir(), 'sk-bench-gateway-'));
  try {
    const names = brandNames();
    const statPath = join(dir, 'stat-me.txt');
    await writeFile(statPath, 'benchmark target\n');
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, TOKEN, { mode: 0o600 });

    console.log('bench gateway: starting the agent');
    const agent = await startCli(
      ['agent', '--host', '127.0.0.1', '--port', '0', '--token-file', tokenFile, '--default-user', userInfo().username],
      'agent',
    );
    const agentPort = agent.port;
    const catalogFile = join(dir, 'catalog.json');
    await writeFile(catalogFile, JSON.stringify([{ sandboxID: SANDBOX_ID, host: '127.0.0.1', agentPort, token: TOKEN, state: 'running' }]));
    console.log('bench gateway: starting the gateway');
    const gateway = await startCli(
      [
        'gateway',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--catalog',
        `file:${catalogFile}`,
        ...(workers > 1 ? ['--workers', String(workers)] : []),
      ],
      'gateway',
      CLI,
      values['cpu-profile-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-profile-dir'])],
    );
    const gatewayPort = gateway.port;
    const baselineCli = values['baseline-cli'] === undefined ? undefined : resolve(values['baseline-cli']);
    const baseline = baselineCli
      ? await startCli(
          [
            'gateway',
            '--host',
            '127.0.0.1',
            '--port',
            '0',
            '--catalog',
            `file:${catalogFile}`,
            ...(workers > 1 ? ['--workers', String(workers)] : []),
          ],
          'gateway',
          baselineCli,
        )
      : undefined;
    const TARGETS = ALL_TARGETS.filter((t) => t !== 'baseline' || baseline !== undefined);
    console.log('bench gateway: starting nginx');
    const nginxPort = await freePort();
    const nginx = await startNginx({
      dir: join(dir, 'nginx'),
      listenPort: nginxPort,
      idHeader: names.sandboxIdHeader,
      sandboxID: SANDBOX_ID,
      agentHost: '127.0.0.1',
      agentPort,
      accessToken: TOKEN,
      workers,
    });
    children.push(nginx);

    const body = JSON.stringify({ path: statPath });
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'Connect-Protocol-Version': '1',
      [names.sandboxIdHeader]: SANDBOX_ID,
      'X-Access-Token': TOKEN,
    };
    const ports: Record<Target, number> = { direct: agentPort, gateway: gatewayPort, baseline: baseline?.port ?? 0, nginx: nginxPort };
    for (const t of TARGETS) await waitFor200(ports[t], headers, body, t);

    const script = join(dir, 'stat.lua');
    await writeFile(
      script,
      [
        `wrk.method = "POST"`,
        `wrk.body = ${JSON.stringify(body)}`,
        ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
      ].join('\n') + '\n',
    );

    // CPU time per request of the proxy in the path (none for direct) and of the agent: steadier than req/s
    // on a small machine, where the proxy, the agent and wrk share the cores.
    const proxyPid: Record<Target, number | undefined> = {
      direct: undefined,
      gateway: gateway.pid,
      baseline: baseline?.pid,
      nginx: nginx.pid,
    };
    const ticks = clockTicks();
    type Run = LoadResult & { proxyCpuUs: number; agentCpuUs: number };
    const results: Record<Target, Run[]> = { direct: [], gateway: [], baseline: [], nginx: [] };
    for (let round = 0; round < rounds; round++) {
      // Each round starts one target further on, so every target takes every place in turn: a place has a cost of
      // its own (the same build measured between two others ran 15-20% cheaper than at either end).
      const shift = round % TARGETS.length;
      const order = [...TARGETS.slice(shift), ...TARGETS.slice(0, shift)];
      for (const target of order) {
        const url = `http://127.0.0.1:${ports[target]}/filesystem.Filesystem/Stat`;
        if (warmup > 0) await runWrk(url, script, connections, warmup, threads);
        const proxyBefore = cpuSeconds(proxyPid[target], ticks);
        const agentBefore = cpuSeconds(agent.pid, ticks);
        const load = await runWrk(url, script, connections, seconds, threads);
        const perRequestUs = (before: number, after: number) => ((after - before) * 1e6) / load.requests;
        const r: Run = {
          ...load,
          proxyCpuUs: perRequestUs(proxyBefore, cpuSeconds(proxyPid[target], ticks)),
          agentCpuUs: perRequestUs(agentBefore, cpuSeconds(agent.pid, ticks)),
        };
        if (r.failures > 0) throw new Error(`${target}: ${r.failures} failed requests out of ${r.requests}`);
        results[target].push(r);
        console.log(
          `bench gateway: round ${round + 1}/${rounds} ${target.padEnd(7)} ${r.rps.toFixed(0)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  CPU/req proxy ${fmtUs(r.proxyCpuUs)} agent ${fmtUs(r.agentCpuUs)}`,
        );
      }
    }

    const summary = Object.fromEntries(
      TARGETS.map((t) => [
        t,
        {
          rps: median(results[t].map((r) => r.rps)),
          p50Ms: median(results[t].map((r) => r.p50Ms)),
          p99Ms: median(results[t].map((r) => r.p99Ms)),
          proxyCpuUs: median(results[t].map((r) => r.proxyCpuUs)),
          agentCpuUs: median(results[t].map((r) => r.agentCpuUs)),
        },
      ]),
    ) as Record<Target, { rps: number; p50Ms: number; p99Ms: number; proxyCpuUs: number; agentCpuUs: number }>;
    const ratios = {
      rps: summary.gateway.rps / summary.nginx.rps,
      p50: summary.gateway.p50Ms / summary.nginx.p50Ms,
      p99: summary.gateway.p99Ms / summary.nginx.p99Ms,
    };

    console.log(
      `\nStat workload, wrk ${connections} connections, ${threads} thread(s), ${seconds}s x ${rounds} rounds (median), proxy processes: ${workers}, cores: ${require('node:os').cpus().length}`,
    );
    console.log('| target  | req/s | p50 ms | p99 ms | proxy CPU us/req | agent CPU us/req |');
    console.log('|---------|------:|-------:|-------:|-----------------:|-----------------:|');
    for (const t of TARGETS) {
      const s = summary[t];
      console.log(
        `| ${t.padEnd(7)} | ${s.rps.toFixed(0)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${fmtUs(s.proxyCpuUs)} | ${fmtUs(s.agentCpuUs)} |`,
      );
    }
    console.log(`\ngateway / nginx: req/s ${ratios.rps.toFixed(2)}x, p50 ${ratios.p50.toFixed(2)}x, p99 ${ratios.p99.toFixed(2)}x`);
    const cpuRatio = (t: Target) => summary[t].proxyCpuUs / summary.nginx.proxyCpuUs;
    console.log(`gateway / nginx: proxy CPU per request ${cpuRatio('gateway').toFixed(2)}x`);
    if (baseline) {
      const b = summary.baseline;
      console.log(
        `baseline / nginx: req/s ${(b.rps / summary.nginx.rps).toFixed(2)}x, p99 ${(b.p99Ms / summary.nginx.p99Ms).toFixed(2)}x, proxy CPU per request ${cpuRatio('baseline').toFixed(2)}x`,
      );
    }
    console.log(
      `gateway / direct: req/s ${(summary.gateway.rps / summary.direct.rps).toFixed(2)}x; nginx / direct: req/s ${(summary.nginx.rps / summary.direct.rps).toFixed(2)}x`,
    );
    if (values.json)
      await writeFile(
        values.json,
        JSON.stringify({ connections, threads, seconds, rounds, workers, summary, ratios, runs: results }, null, 2),
      );
  } finally {
    // SIGTERM first: a multi-process gateway or nginx stops its workers itself; SIGKILL only what is left after 5 s.
    const running = children.filter((child) => child.exitCode === null && child.signalCode === null);
    const exited = running.map((child) => new Promise((r) => child.once('exit', r)));
    for (const child of running) child.kill('SIGTERM');
    await Promise.race([Promise.all(exited), new Promise((r) => setTimeout(r, 5000))]);
    for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`bench gateway: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
