/**
 * Agent memory under hostile input. Starts the bundled agent as a sandbox runs it (`node run.js agent`, with the
 * V8 flags the runtime gives it) and, as a peer in the same run, the same bundle with no V8 flags; then drives each
 * through the same phases and reads the agent's resident memory (VmRSS, VmHWM from /proc/<pid>/status):
 *
 *   oversized   many clients send unary calls with bodies far past --max-body-bytes, declared and chunked
 *   endless     many connections send a chunked body a little at a time and never finish it
 *   listdir     32 concurrent ListDirs of a 100,000-entry tree whose clients read their answers slowly
 *   streams     many concurrent /files downloads of a large file, read slowly
 *
 *   node dist/scripts/bench/agent-memory.js [--entries 100000] [--json FILE]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { agentNodeFlags } from '../../src/runtime/agent-payload';

const BUNDLE_RUN = path.resolve(__dirname, '..', '..', 'bundle', 'run.js');
const MiB = 1024 * 1024;

function log(msg: string): void {
  process.stderr.write(`agent-memory: ${msg}\n`);
}

function procStatus(pid: number, key: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${key} for ${pid}`);
  return Number(m[1]) * 1024;
}

interface RunningAgent {
  child: ChildProcess;
  port: number;
}

function startAgent(nodeFlags: string[]): Promise<RunningAgent> {
  const child = spawn(
    process.execPath,
    [...nodeFlags, BUNDLE_RUN, 'agent', '--host', '127.0.0.1', '--port', '0', '--default-user', os.userInfo().username],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
        HOME: os.tmpdir(),
        ...(process.env.BENCH_ARENA ? { MALLOC_ARENA_MAX: process.env.BENCH_ARENA } : {}),
      },
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on [^:]+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code} before listening`)));
  });
}

/** Writes raw HTTP on `n` sockets; each socket's writer decides what to send. Resolves when all are closed. */
async function sockets(port: number, n: number, drive: (s: net.Socket, i: number) => Promise<void>): Promise<void> {
  const all: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    all.push(
      new Promise<void>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.on('error', () => resolve());
        s.on('close', () => resolve());
        s.on('data', () => undefined);
        s.once('connect', () => {
          drive(s, i).catch(() => s.destroy());
        });
      }),
    );
  }
  await Promise.all(all);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes `bytes` in 64 KiB pieces, waiting for the socket to drain; stops quietly when the peer closes. */
async function pump(s: net.Socket, bytes: number, chunked: boolean): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, 0x61);
  for (let sent = 0; sent < bytes && !s.destroyed; sent += piece.length) {
    const data = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    if (!s.write(data)) await new Promise((r) => s.once('drain', r));
  }
}

async function oversized(port: number): Promise<void> {
  const body = 16 * MiB;
  await sockets(port, 64, async (s, i) => {
    const chunked = i % 2 === 1;
    const head = chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${body}\r\n`;
    s.write(
      `POST /filesystem.Filesystem/Stat HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nConnect-Protocol-Version: 1\r\n${head}\r\n`,
    );
    await pump(s, body, chunked);
    s.end();
  });
}

async function endless(port: number, seconds: number): Promise<void> {
  const until = Date.now() + seconds * 1000;
  await sockets(port, 400, async (s) => {
    s.write(
      'POST /process.Process/Start HTTP/1.1\r\nHost: a\r\nContent-Type: application/connect+json\r\nConnect-Protocol-Version: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    while (Date.now() < until && !s.destroyed) {
      s.write(`400\r\n${'b'.repeat(1024)}\r\n`);
      await sleep(50);
    }
    s.destroy();
  });
}

async function listdirs(port: number, dir: string, readDelayMs: number): Promise<void> {
  const body = JSON.stringify({ path: dir, depth: 3 });
  await sockets(port, 32, async (s) => {
    s.pause();
    s.write(
      `POST /filesystem.Filesystem/ListDir HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nConnect-Protocol-Version: 1\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // A slow reader: a little every readDelayMs, until the answer ends.
    while (!s.destroyed) {
      await sleep(readDelayMs);
      while (s.read(64 * 1024) !== null) {
        /* drain one piece */
      }
      if (s.readableEnded) break;
    }
  });
}

async function downloads(port: number, file: string, readDelayMs: number): Promise<void> {
  await sockets(port, 64, async (s) => {
    s.pause();
    s.write(`GET /files?path=${encodeURIComponent(file)} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
    while (!s.destroyed) {
      await sleep(readDelayMs);
      for (let k = 0; k < 16 && s.read() !== null; k++) {
        /* drain */
      }
      if (s.readableEnded) break;
    }
  });
}

function generateTree(root: string, total: number): void {
  let n = 0;
  for (let i = 0; n < total; i++) {
    const d1 = path.join(root, `d${i}`);
    fs.mkdirSync(d1);
    n++;
    for (let j = 0; j < 40 && n < total; j++) {
      const d2 = path.join(d1, `s${j}`);
      fs.mkdirSync(d2);
      n++;
      for (let k = 0; k < 60 && n < total; k++, n++) fs.writeFileSync(path.join(d2, `file-with-a-longer-name-${k}.txt`), '');
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { entries: { type: 'string', default: '100000' }, json: { type: 'string' } } });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-memory-'));
  const results: Record<string, Record<string, number>> = {};
  try {
    const tree = path.join(work, 'tree');
    fs.mkdirSync(tree);
    generateTree(tree, Number(values.entries));
    const big = path.join(work, 'big.bin');
    fs.writeFileSync(big, Buffer.alloc(64 * MiB, 1));
    const variants: [string, string[]][] = [
      ['agent as the runtime starts it', agentNodeFlags()],
      ['same bundle, no V8 flags (peer)', []],
    ];
    for (const [name, flags] of variants) {
      const agent = await startAgent(flags);
      const pid = agent.child.pid as number;
      const row: Record<string, number> = {};
      try {
        await sleep(300);
        row.idleRss = procStatus(pid, 'VmRSS');
        log(`${name}: idle ${(row.idleRss / MiB).toFixed(1)} MiB`);
        for (const [phase, run] of [
          ['oversized', () => oversized(agent.port)],
          ['endless', () => endless(agent.port, 8)],
          ['listdir', () => listdirs(agent.port, tree, 20)],
          ['streams', () => downloads(agent.port, big, 5)],
        ] as const) {
          const t0 = Date.now();
          await run();
          row[`${phase}Hwm`] = procStatus(pid, 'VmHWM');
          log(`${name}: after ${phase} (${Date.now() - t0} ms) high-water ${(row[`${phase}Hwm`] / MiB).toFixed(1)} MiB`);
        }
        await sleep(2000);
        row.endRss = procStatus(pid, 'VmRSS');
        row.peak = procStatus(pid, 'VmHWM');
        if (agent.child.exitCode !== null) throw new Error(`${name}: the agent died (${agent.child.exitCode})`);
      } finally {
        agent.child.kill('SIGKILL');
      }
      results[name] = row;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const [ours, peer] = Object.values(results);
  const table = Object.entries(results).map(([name, r]) => ({
    agent: name,
    'idle MiB': (r.idleRss / MiB).toFixed(1),
    'peak MiB': (r.peak / MiB).toFixed(1),
    'after MiB': (r.endRss / MiB).toFixed(1),
    ...Object.fromEntries(['oversized', 'endless', 'listdir', 'streams'].map((p) => [`${p} hwm`, (r[`${p}Hwm`] / MiB).toFixed(1)])),
  }));
  console.table(table);
  console.log(`peak ratio (ours / peer): ${(ours.peak / peer.peak).toFixed(2)}; goal: peak <= 128 MiB`);
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(results, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
