/**
 * Agent benchmark. Part 1: ListDir of a generated tree of 100,000 entries (depth 3) through HTTP, against GNU
 * `find -printf` printing the same fields of the same tree in the same run: wall time of each (median of the
 * rounds, alternating which goes first), their ratio, and peak memory. find runs twice per round: with owner and
 * group names (%u %g, the same fields) and with numeric ids (%U %G), because glibc's name lookups re-read
 * /etc/passwd on every call and dominate find's time. Part 2: Stat latency p50/p99 with 1 and 32 concurrent
 * keep-alive clients (closed loop, per-call hrtime).
 *
 * One unmeasured run of each comes first (page/dentry caches, the agent's JIT).
 *
 * With `--baseline-cli PATH` (the `dist/src/cli/main.js` of another build) a second agent from that build lists the
 * same tree in the same rounds, so a change is reported against its own previous version and `find` in one run.
 * The agents' CPU time per listing (utime + stime from /proc/<pid>/stat) is reported beside the wall times: on a
 * shared machine it moves less with the load than the wall time does.
 *
 * Peak memory is VmHWM from /proc/<pid>/status: for the agent (a fresh child process) read after the ListDir
 * rounds, with its VmRSS before the first call shown for reference; for find, sampled every millisecond while
 * it runs (VmHWM only grows, so the last sample before exit is its peak up to the sampling gap).
 *
 *   node dist/scripts/bench/agent-listdir.js [--entries 100000] [--rounds 3] [--seconds 5] [--baseline-cli PATH] [--json FILE] [--keep]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { Agent, request } from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

interface LoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const CLI = path.resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');
const FIND_FORMAT = '%f\\t%y\\t%Y\\t%p\\t%s\\t%m\\t%M\\t%u\\t%g\\t%T@\\t%l\\n';
/** The same with numeric owner and group: glibc's getpwuid re-reads /etc/passwd per call, which dominates find's time. */
const FIND_FORMAT_IDS = FIND_FORMAT.replace('%u\\t%g', '%U\\t%G');

function log(msg: string): void {
  process.stderr.write(`agent-listdir: ${msg}\n`);
}

/** a top dirs x b subdirs x c files, plus top-level files and symlinks to reach `total` entries. */
function generateTree(root: string, total: number): { entries: number } {
  const a = 40;
  const b = 40;
  const c = Math.floor((total - a - a * b) / (a * b));
  let entries = 0;
  for (let i = 0; i < a; i++) {
    const d1 = path.join(root, `dir${String(i).padStart(2, '0')}`);
    fs.mkdirSync(d1);
    entries++;
    for (let j = 0; j < b; j++) {
      const d2 = path.join(d1, `sub${String(j).padStart(2, '0')}`);
      fs.mkdirSync(d2);
      entries++;
      for (let k = 0; k < c; k++) {
        fs.writeFileSync(path.join(d2, `file${String(k).padStart(3, '0')}.txt`), 'x'.repeat(k));
        entries++;
      }
    }
    if (i % 10 === 0) log(`generating tree: ${entries} entries`);
  }
  let n = 0;
  while (entries < total) {
    const p = path.join(root, `top${String(n).padStart(4, '0')}`);
    if (n % 20 === 19) fs.symlinkSync(`dir${String(n % a).padStart(2, '0')}`, p);
    else fs.writeFileSync(p, 'top');
    n++;
    entries++;
  }
  return { entries };
}

function procStatus(pid: number, key: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) the process has used so far, in ms. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the file, 12 and 13 after the command name; in clock ticks (100 a second).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function startAgent(cli = CLI): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [cli, 'agent', '--host', '127.0.0.1', '--port', '0', '--default-user', os.userInfo().username, '--max-entries', '2000000'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent did not start: ${out}`)), 15_000);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /agent listening on \S+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code}: ${out}`)));
  });
}

/** One ListDir over HTTP: time to the last byte of the body, and the body. */
function listDir(port: number, dir: string, depth: number): Promise<{ ms: number; body: Buffer; status: number }> {
  const payload = JSON.stringify({ path: dir, depth });
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/filesystem.Filesystem/ListDir',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () =>
          resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, body: Buffer.concat(parts), status: res.statusCode ?? 0 }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Closed-loop Stat load: `connections` keep-alive clients, each sending its next call when the last one ends,
 * for `seconds` after a 1 s warm-up; latency per call from hrtime (autocannon rounds to whole milliseconds,
 * which hides a sub-millisecond p50).
 */
async function statLoad(port: number, body: string, connections: number, seconds: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const headers = { 'content-type': 'application/json', 'connect-protocol-version': '1', 'content-length': Buffer.byteLength(body) };
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const start = process.hrtime.bigint();
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/filesystem.Filesystem/Stat', headers, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Number(process.hrtime.bigint() - start) / 1e6)
            : reject(new Error(`Stat answered ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  const latencies: number[] = [];
  const warmEnd = Date.now() + 1000;
  const end = warmEnd + seconds * 1000;
  const worker = async () => {
    while (Date.now() < end) {
      const ms = await one();
      if (Date.now() > warmEnd) latencies.push(ms);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  latencies.sort((p, q) => p - q);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { requests: latencies.length, perSecond: latencies.length / seconds, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** find with the same fields, output consumed here as the HTTP body is; VmHWM sampled every millisecond. */
function runFind(dir: string, format = FIND_FORMAT): Promise<{ ms: number; lines: number; bytes: number; peak: number }> {
  const start = process.hrtime.bigint();
  const child = spawn('find', [dir, '-mindepth', '1', '-maxdepth', '3', '-printf', format], { stdio: ['ignore', 'pipe', 'inherit'] });
  let peak = 0;
  const sampler = setInterval(() => {
    const v = procStatus(child.pid!, 'VmHWM');
    if (v !== undefined && v > peak) peak = v;
  }, 1);
  let bytes = 0;
  let lines = 0;
  child.stdout!.on('data', (d: Buffer) => {
    bytes += d.length;
    for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) lines++;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(sampler);
      if (code !== 0) reject(new Error(`find exited with ${code}`));
      else resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, lines, bytes, peak });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]!;
const mib = (n: number | undefined) => (n === undefined ? 'n/a' : `${(n / 1024 / 1024).toFixed(1)} MiB`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      entries: { type: 'string', default: '100000' },
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      json: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'baseline-cli': { type: 'string' },
    },
  });
  const baselineCli = values['baseline-cli'] === undefined ? undefined : path.resolve(values['baseline-cli']);
  const total = Number(values.entries);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build`);

  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-listdir-bench-')));
  let agent: { child: ChildProcess; port: number } | undefined;
  let baseline: { child: ChildProcess; port: number } | undefined;
  try {
    const t0 = Date.now();
    const { entries } = generateTree(root, total);
    log(`tree of ${entries} entries (depth 3) in ${root}, made in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    agent = await startAgent();
    const pid = agent.child.pid!;
    const rssBefore = procStatus(pid, 'VmRSS');
    // Warm-up, not measured: the dentry and inode caches for both, and the agent's JIT.
    await runFind(root);
    await listDir(agent.port, root, 3);
    if (baselineCli) {
      baseline = await startAgent(baselineCli);
      await listDir(baseline.port, root, 3);
    }
    const agentMs: number[] = [];
    const agentCpuMs: number[] = [];
    const baselineMs: number[] = [];
    const baselineCpuMs: number[] = [];
    const findMs: number[] = [];
    const findIdsMs: number[] = [];
    let findPeak = 0;
    let bodyBytes = 0;
    let findBytes = 0;
    for (let r = 0; r < rounds; r++) {
      const order = ['agent', ...(baseline ? ['baseline'] : []), 'find', 'find-ids'];
      if (r % 2 === 1) order.reverse();
      for (const who of order) {
        if (who === 'agent' || who === 'baseline') {
          const target = who === 'agent' ? agent : baseline!;
          const cpuBefore = cpuMs(target.child.pid!);
          const res = await listDir(target.port, root, 3);
          const cpu = cpuMs(target.child.pid!) - cpuBefore;
          if (res.status !== 200) throw new Error(`ListDir answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
          const count = (JSON.parse(res.body.toString('utf8')) as { entries: unknown[] }).entries.length;
          if (count !== entries) throw new Error(`ListDir gave ${count} entries, expected ${entries}`);
          (who === 'agent' ? agentMs : baselineMs).push(res.ms);
          (who === 'agent' ? agentCpuMs : baselineCpuMs).push(cpu);
          bodyBytes = res.body.length;
          log(`round ${r + 1}: ${who} ListDir ${res.ms.toFixed(0)} ms (CPU ${cpu} ms), ${count} entries, ${mib(res.body.length)}`);
        } else if (who === 'find-ids') {
          const res = await runFind(root, FIND_FORMAT_IDS);
          if (res.lines !== entries) throw new Error(`find printed ${res.lines} lines, expected ${entries}`);
          findIdsMs.push(res.ms);
          findPeak = Math.max(findPeak, res.peak);
          log(`round ${r + 1}: find -printf (numeric owner) ${res.ms.toFixed(0)} ms`);
        } else {
          const res = await runFind(root);
          if (res.lines !== entries) throw new Error(`find printed ${res.lines} lines, expected ${entries}`);
          findMs.push(res.ms);
          findPeak = Math.max(findPeak, res.peak);
          findBytes = res.bytes;
          log(`round ${r + 1}: find -printf ${res.ms.toFixed(0)} ms, ${res.lines} lines`);
        }
      }
    }
    const agentPeak = procStatus(pid, 'VmHWM');

    const statPath = path.join(root, 'dir00', 'sub00', 'file001.txt');
    const stat: Record<number, LoadResult> = {};
    for (const connections of [1, 32]) {
      log(`Stat load: ${connections} connection(s), ${seconds} s`);
      stat[connections] = await statLoad(agent.port, JSON.stringify({ path: statPath }), connections, seconds);
    }

    const a = median(agentMs);
    const f = median(findMs);
    const fi = median(findIdsMs);
    const rows = [
      [
        'ListDir depth 3 over HTTP (agent)',
        `${a.toFixed(0)} ms`,
        `${mib(bodyBytes)} JSON`,
        `peak ${mib(agentPeak)} (VmRSS before: ${mib(rssBefore)})`,
      ],
      ['find -mindepth 1 -maxdepth 3 -printf', `${f.toFixed(0)} ms`, `${mib(findBytes)} text`, `peak ${mib(findPeak)}`],
      ['find ... with %U %G (numeric owner)', `${fi.toFixed(0)} ms`, '', ''],
      ['ratio agent / find (same fields)', `${(a / f).toFixed(2)}x`, '', ''],
      ['ratio agent / find (numeric owner)', `${(a / fi).toFixed(2)}x`, '', ''],
      ['agent CPU per listing', `${median(agentCpuMs).toFixed(0)} ms`, '', ''],
      ...(baseline
        ? [
            ['ListDir, baseline build', `${median(baselineMs).toFixed(0)} ms`, `CPU ${median(baselineCpuMs).toFixed(0)} ms`, ''],
            ['ratio baseline / find (numeric owner)', `${(median(baselineMs) / fi).toFixed(2)}x`, '', ''],
            [
              'ratio agent / baseline',
              `${(a / median(baselineMs)).toFixed(2)}x`,
              `CPU ${(median(agentCpuMs) / median(baselineCpuMs)).toFixed(2)}x`,
              '',
            ],
          ]
        : []),
      [
        'Stat, 1 client',
        `p50 ${stat[1]!.p50Ms.toFixed(2)} ms`,
        `p99 ${stat[1]!.p99Ms.toFixed(2)} ms`,
        `${stat[1]!.perSecond.toFixed(0)} req/s`,
      ],
      [
        'Stat, 32 clients',
        `p50 ${stat[32]!.p50Ms.toFixed(2)} ms`,
        `p99 ${stat[32]!.p99Ms.toFixed(2)} ms`,
        `${stat[32]!.perSecond.toFixed(0)} req/s`,
      ],
    ];
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
    console.log(
      `\nagent ListDir vs find, ${entries} entries, depth 3, median of ${rounds} rounds; ${os.cpus().length} CPUs, node ${process.version}`,
    );
    for (const row of rows)
      console.log(
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      );
    console.log(
      '(agent: all EntryInfo fields incl. xattr metadata, names sorted, JSON; find: same stat fields as text, unsorted, no xattrs)',
    );
    const summary = {
      entries,
      rounds,
      listDirMs: {
        agent: agentMs,
        find: findMs,
        findNumericOwner: findIdsMs,
        agentMedian: a,
        findMedian: f,
        findNumericOwnerMedian: fi,
        ratio: a / f,
        ratioNumericOwner: a / fi,
        agentCpu: agentCpuMs,
        ...(baseline ? { baseline: baselineMs, baselineCpu: baselineCpuMs, ratioToBaseline: a / median(baselineMs) } : {}),
      },
      bytes: { agentJson: bodyBytes, findText: findBytes },
      peakBytes: { agent: agentPeak, agentRssBefore: rssBefore, find: findPeak },
      stat,
    };
    console.log('(Stat: closed-loop keep-alive clients in the benchmark process, 1 s warm-up; peak memory: /proc VmHWM)');
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    agent?.child.kill('SIGTERM');
    baseline?.child.kill('SIGTERM');
    if (!values.keep) fs.rmSync(root, { recursive: true, force: true });
    else log(`tree kept at ${root}`);
  }
}

main().catch((err: unknown) => {
  console.error(`agent-listdir: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
