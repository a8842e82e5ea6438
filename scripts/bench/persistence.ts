/**
 * Persistence latencies on the real runtime, one platform, one sandbox with 200 MiB written in its home:
 *
 * - pause to disk (`POST /sandboxes/{id}/pause {memory: false}` -> 204) and resume (`POST /v2/sandboxes/{id}/connect`
 *   -> 201, the agent answering), p50/p95; goal: resume at most 1 s (E2B's figure).
 * - snapshot (`POST /sandboxes/{id}/snapshots`) and fork of one (`POST /sandboxes/{id}/fork`), p50, against the
 *   floor: `cp -a` of the same upper dir, timed in the same run, sample by sample. Reported as ratios.
 *
 *   node dist/scripts/bench/persistence.js [--samples 10]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { startPlatformOnHost } from '../../src/platform/on-host';
import { instancePaths, sandboxPaths } from '../../src/runtime/instance';

async function call(url: string, key: string, method: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

function pct(times: number[], q: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function timed(what: string, f: () => Promise<{ status: number; body: unknown }>, want: number): Promise<[number, unknown]> {
  const t0 = performance.now();
  const r = await f();
  const ms = performance.now() - t0;
  if (r.status !== want) throw new Error(`${what} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return [ms, r.body];
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { samples: { type: 'string', default: '10' } } });
  const samples = Number(values.samples);
  const stateDir = mkdtempSync(path.join(tmpdir(), 'bench-persist-'));
  const platform = await startPlatformOnHost({ stateDir });
  const ids: string[] = [];
  const snapshots: string[] = [];
  try {
    const { url, apiKey: key } = platform;
    const made = await call(`${url}/v2/sandboxes`, key, 'POST', { templateID: 'base', timeout: 3600 });
    if (made.status !== 201) throw new Error(`create answered ${made.status}: ${JSON.stringify(made.body)}`);
    const id = (made.body as { sandboxID: string }).sandboxID;
    ids.push(id);
    const record = await platform.sandboxes.get(id);
    const wrote = await platform.sandboxes
      .agentFor(record)
      .run(record.envdAccessToken, 'head -c 200M /dev/urandom > /home/user/data.bin && sync', { user: 'user', timeoutMs: 120_000 });
    if (wrote.exitCode !== 0) throw new Error(`writing 200 MiB failed: ${wrote.outputTail}`);
    const upper = sandboxPaths(
      instancePaths(platform.instance, platform.runtimeName, { dataRoot: path.join(stateDir, 'runtime') }),
      id,
    ).upper;
    const t = { pause: [] as number[], resume: [] as number[], snapshot: [] as number[], fork: [] as number[], cp: [] as number[] };
    for (let i = 0; i < samples; i++) {
      t.pause.push((await timed('pause', () => call(`${url}/sandboxes/${id}/pause`, key, 'POST', { memory: false }), 204))[0]);
      t.resume.push((await timed('connect', () => call(`${url}/v2/sandboxes/${id}/connect`, key, 'POST', { timeout: 3600 }), 201))[0]);
      const [snapMs, snap] = await timed('snapshot', () => call(`${url}/sandboxes/${id}/snapshots`, key, 'POST', {}), 201);
      t.snapshot.push(snapMs);
      snapshots.push((snap as { snapshotID: string }).snapshotID);
      const [forkMs, forks] = await timed('fork', () => call(`${url}/sandboxes/${id}/fork`, key, 'POST', { count: 1 }), 201);
      t.fork.push(forkMs);
      for (const f of forks as Array<{ sandbox?: { sandboxID: string } }>) if (f.sandbox) ids.push(f.sandbox.sandboxID);
      const target = path.join(stateDir, `cp-${i}`);
      const c0 = performance.now();
      execFileSync('cp', ['-a', '--reflink=auto', '--', upper, target]);
      t.cp.push(performance.now() - c0);
      fs.rmSync(target, { recursive: true, force: true });
      for (const extra of ids.splice(1)) await call(`${url}/sandboxes/${extra}`, key, 'DELETE');
      for (const s of snapshots.splice(0)) await call(`${url}/templates/${s}`, key, 'DELETE');
    }
    const row = (name: string, times: number[]) =>
      console.log(`${name.padEnd(22)} p50 ${pct(times, 0.5).toFixed(0).padStart(6)} ms  p95 ${pct(times, 0.95).toFixed(0).padStart(6)} ms`);
    console.log(`persistence: ${samples} samples, a sandbox with 200 MiB written`);
    row('pause to disk', t.pause);
    row('resume from disk', t.resume);
    row('snapshot', t.snapshot);
    row('fork (count 1)', t.fork);
    row('cp -a upper (floor)', t.cp);
    const cp = pct(t.cp, 0.5);
    console.log(`resume p50 ${pct(t.resume, 0.5) <= 1000 ? 'meets' : 'misses'} the 1 s goal`);
    console.log(
      `snapshot / cp -a p50: ${(pct(t.snapshot, 0.5) / cp).toFixed(2)}x; fork / cp -a p50: ${(pct(t.fork, 0.5) / cp).toFixed(2)}x`,
    );
    return 0;
  } finally {
    for (const s of snapshots) await call(`${platform.url}/templates/${s}`, platform.apiKey, 'DELETE').catch(() => {});
    for (const id of ids) await platform.sandboxes.kill(id).catch(() => {});
    await platform.close({ killSandboxes: true });
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`persistence: ${err.message}`);
    process.exit(1);
  },
);
