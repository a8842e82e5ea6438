/**
 * What teams cost a create: `POST /v2/sandboxes` -> 201 on two platforms in the same run, on the real runtime, the
 * creates taking turns sample by sample:
 *
 * - teams:    a member key of a team with quotas: the key looked up in the store with its request count, the team
 *             check, the quota reservation (and its metrics sample), the audit entry.
 * - one team: the peer, `teams: false`: the key file's keys only, none of the above.
 *
 * Each sandbox is killed (not timed) before the next. Prints p50/p95 of both, the p50 difference (goal: at most 2 ms)
 * and the ratio. Root only; each platform makes one link into the root namespace (its standalone sandbox network).
 *
 *   node dist/scripts/bench/team-check.js [--samples 40] [--json FILE]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { startPlatformOnHost, type PlatformOnHost } from '../../src/platform/on-host';

function log(msg: string): void {
  process.stderr.write(`team-check: ${msg}\n`);
}

async function call(url: string, key: string, method: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

interface Column {
  name: string;
  platform: PlatformOnHost;
  key: string;
  times: number[];
}

async function createOnce(c: Column): Promise<void> {
  const t0 = performance.now();
  const made = await call(`${c.platform.url}/v2/sandboxes`, c.key, 'POST', { templateID: 'base' });
  const ms = performance.now() - t0;
  if (made.status !== 201) throw new Error(`${c.name}: create answered ${made.status}: ${JSON.stringify(made.body)}`);
  c.times.push(ms);
  const id = (made.body as { sandboxID: string }).sandboxID;
  const killed = await call(`${c.platform.url}/sandboxes/${id}`, c.key, 'DELETE');
  if (killed.status !== 204) throw new Error(`${c.name}: kill answered ${killed.status}`);
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { samples: { type: 'string', default: '40' }, json: { type: 'string' } } });
  const samples = Number(values.samples);
  if (!Number.isInteger(samples) || samples < 2) {
    console.error('team-check: --samples must be an integer >= 2');
    return 2;
  }
  const scratch = fs.mkdtempSync('/var/tmp/sk-bench-teams-');
  const platforms: PlatformOnHost[] = [];
  try {
    const quiet = () => {};
    const withTeams = await startPlatformOnHost({ stateDir: path.join(scratch, 'teams'), log: quiet });
    platforms.push(withTeams);
    const single = await startPlatformOnHost({ stateDir: path.join(scratch, 'single'), teams: false, log: quiet });
    platforms.push(single);
    const quotas = { sandboxes: 1000, vcpus: 100_000, memoryMiB: 100_000_000, maxTimeoutSeconds: 3600, requestsPerSecond: 1000 };
    const team = await call(`${withTeams.url}/admin/teams`, withTeams.apiKey, 'POST', { name: 'bench', quotas });
    if (team.status !== 201) throw new Error(`team create answered ${team.status}: ${JSON.stringify(team.body)}`);
    const key = await call(`${withTeams.url}/admin/keys`, withTeams.apiKey, 'POST', { team: 'bench', name: 'bench' });
    const columns: Column[] = [
      { name: 'teams (member key, quotas, audit)', platform: withTeams, key: (key.body as { key: string }).key, times: [] },
      { name: 'one team (no check, no quotas)', platform: single, key: single.apiKey, times: [] },
    ];
    log('warming up each platform (base image, first sandbox)');
    for (const c of columns) {
      await createOnce(c);
      c.times.length = 0;
    }
    log(`${samples} creates on each, taking turns`);
    for (let i = 0; i < samples; i++) for (const c of i % 2 ? [...columns].reverse() : columns) await createOnce(c);
    const rows = columns.map((c) => {
      const sorted = [...c.times].sort((a, b) => a - b);
      return { column: c.name, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), n: sorted.length };
    });
    const [teams, one] = [rows[0]!, rows[1]!];
    console.log(`\ncreate (POST /v2/sandboxes -> 201), ${samples} samples each, same run\n`);
    console.log('| platform | p50 | p95 |');
    console.log('|---|---|---|');
    for (const r of rows) console.log(`| ${r.column} | ${r.p50.toFixed(1)} ms | ${r.p95.toFixed(1)} ms |`);
    console.log(
      `\nteams add ${(teams.p50 - one.p50).toFixed(2)} ms at p50 (goal <= 2 ms); teams / one team: ${(teams.p50 / one.p50).toFixed(3)}x p50, ${(teams.p95 / one.p95).toFixed(3)}x p95`,
    );
    if (values.json) fs.writeFileSync(values.json, JSON.stringify({ samples, rows }, null, 2));
  } finally {
    log('cleaning up');
    for (const p of platforms) await p.close({ killSandboxes: true }).catch((err: Error) => log(`close: ${err.message}`));
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`team-check: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
