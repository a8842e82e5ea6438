/**
 * The warm pool on a host whose admission is nearly full, and a pool of a team's private template, against the real
 * platform (runtime, network, agent, gateway) driven by the unmodified E2B SDK. The host's admission is given room
 * for three 512 MB sandboxes; the pools are `base: 1` and `skpl-team/skpl-private: 1` (a template only that team
 * sees). A cold create the host would refuse removes pooled sandboxes (the other template's first, then its own
 * template's: a create with a volume, which no pooled sandbox can serve) and is admitted; with the pool empty it is
 * refused as before; concurrent creates on a host full with pooled sandboxes all succeed. The pooled private template is taken by its team's creates only:
 * another team's create of its alias or ID is a 404, and nothing of one create reaches the next. `GET /metrics`
 * shows each pool's ready and starting sandboxes, its takes, misses and evictions. Root only.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import { waitFor } from '../../../src/util/poll';
import { freshAgentPayload, ROOTFS_TIMEOUT_MS, baseRootfs } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { adminCall, sandboxTraces, startPlatformAndGateway } from './helpers/platform-and-gateway';

jest.setTimeout(300_000);

const TEAM = 'skpl-team';
const OTHER = 'skpl-other';
const PRIVATE = 'skpl-private';
const PRIVATE_POOL = `${TEAM}/${PRIVATE}`;
/** Room for three sandboxes of 512 MB (base's and the built template's size), whatever this host has. */
const CAPACITY = { memoryMB: 3 * 512, cpuCount: 2 };
let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
const keys: Record<string, string> = {};
let privateID: string;

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skpl-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, {
    platform: {
      warmPool: { base: 1, [PRIVATE_POOL]: 1 },
      warmPoolCheckMs: 300,
      admissionCapacity: CAPACITY,
      limits: { memoryOvercommit: 1 },
    },
  }));
  sdk = await SdkDriver.start();
  for (const name of [TEAM, OTHER]) {
    await adminCall(opts, 'POST', '/admin/teams', { name, quotas: {} });
    keys[name] = (await adminCall(opts, 'POST', '/admin/keys', { team: name, name: 'k' })).key as string;
  }
  // The team's own template (private: only the team sees it), built with its key.
  privateID = (await sdk.build(PRIVATE, 'echo private | sudo tee /etc/skpl-private', { ...opts, apiKey: keys[TEAM] })).templateId;
}, ROOTFS_TIMEOUT_MS + 240_000);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const pooledIDs = (name: string): string[] => (platform.sandboxes.warmPool()[name] ?? []).map((s) => s.sandboxID);

/** Waits (bounding only a hang) until the pool of `name` holds `n` sandboxes, none of `not`; answers their IDs. */
function pooled(name: string, n: number, not: string[] = []): Promise<string[]> {
  return waitFor(
    `${n} pooled sandboxes of ${name}`,
    () => {
      const ids = pooledIDs(name);
      return ids.length === n && !ids.some((id) => not.includes(id)) ? ids : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 100, describe: () => JSON.stringify(platform.sandboxes.warmPool()) },
  );
}

/** A create through the API as the SDK sends it; answers the status and body (the SDK hides a 404's status). */
async function createStatus(templateID: string, apiKey: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${opts.apiUrl}/sandboxes`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ templateID, timeout: 300 }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Whether the platform's log of the sandbox says its create was served from the warm pool. */
async function fromPool(sandboxID: string, apiKey = opts.apiKey): Promise<boolean> {
  const res = await fetch(`${opts.apiUrl}/sandboxes/${sandboxID}/logs`, { headers: { 'x-api-key': apiKey } });
  const body = (await res.json()) as { logEntries: Array<{ message: string }> };
  const ready = body.logEntries.map((e) => e.message).find((m) => m.startsWith('sandbox ready in'));
  expect(ready).toBeDefined();
  return /from the warm pool/.test(ready as string);
}

const run = (sandboxID: string, cmd: string) => sdk.call<{ stdout: string; exitCode: number }>(sandboxID, 'commands.run', cmd);

async function kill(sandboxID: string, apiKey = opts.apiKey): Promise<void> {
  const res = await fetch(`${opts.apiUrl}/sandboxes/${sandboxID}`, { method: 'DELETE', headers: { 'x-api-key': apiKey } });
  expect(res.status).toBe(204);
  expect(sandboxTraces(platform, stateDir, sandboxID)).toEqual([]);
}

/** The value of one sample of the platform's /metrics, or undefined when it is not there. */
async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const res = await fetch(`${opts.apiUrl}/metrics`, { headers: { 'x-api-key': opts.apiKey } });
  expect(res.status).toBe(200);
  const text = await res.text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2]!.split(',');
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(m[3]);
  }
  return undefined;
}

test("a team's private template is pooled and taken only by that team's creates; nothing carries from one create to the next", async () => {
  const [first] = await pooled(PRIVATE_POOL, 1);
  // Another team: the alias and the ID are both unknown to it, as without a pool; the pooled sandbox stays.
  for (const ref of [PRIVATE, privateID]) {
    const refused = await createStatus(ref, keys[OTHER]!);
    expect(refused.status).toBe(404);
  }
  expect(pooledIDs(PRIVATE_POOL)).toEqual([first]);
  // The team's create by alias takes it, and runs the template's files.
  const a = await sdk.create(PRIVATE, { ...opts, apiKey: keys[TEAM] });
  expect(a.sandboxId).toBe(first);
  expect(await fromPool(a.sandboxId, keys[TEAM])).toBe(true);
  expect((await run(a.sandboxId, 'cat /etc/skpl-private')).stdout).toBe('private\n');
  await run(a.sandboxId, 'echo left-by-a > /home/user/a.txt; echo "export LEFT_BY_A=1" >> /home/user/.bashrc');
  await kill(a.sandboxId, keys[TEAM]);
  // The next one (by ID this time) is a new sandbox with nothing of the first.
  const [second] = await pooled(PRIVATE_POOL, 1, [first as string]);
  const b = await sdk.create(privateID, { ...opts, apiKey: keys[TEAM] });
  expect(b.sandboxId).toBe(second);
  expect((await run(b.sandboxId, 'ls /home/user/a.txt 2>&1; grep -c LEFT_BY_A /home/user/.bashrc; env')).stdout).not.toMatch(
    /left-by-a|LEFT_BY_A=1|^1$/m,
  );
  // The default team does not see the team's template either.
  expect((await createStatus(PRIVATE, opts.apiKey)).status).toBe(404);
  await kill(b.sandboxId, keys[TEAM]);
  expect(await metric('sandboxkit_warm_pool_creates_total', { template: PRIVATE_POOL, outcome: 'taken' })).toBe(2);
});

test("a cold create the host's admission refuses removes pooled sandboxes, the other template's first; with none left it is refused", async () => {
  const [base1] = await pooled('base', 1);
  const [private1] = await pooled(PRIVATE_POOL, 1);
  const evictedBefore = (await metric('sandboxkit_warm_pool_evictions_total', { template: PRIVATE_POOL })) ?? 0;
  // Two creates of base: the first takes the pooled one, its refill fills the host's room, the second takes that.
  const a = await sdk.create('base', opts);
  expect(a.sandboxId).toBe(base1);
  const [base2] = await pooled('base', 1, [base1 as string]);
  const b = await sdk.create('base', opts);
  expect(b.sandboxId).toBe(base2);
  // Now a, b and the pooled private sandbox hold all of the host's room: the base pool cannot refill.
  expect(pooledIDs('base')).toEqual([]);
  expect(await metric('sandboxkit_warm_pool_sandboxes', { template: 'base', state: 'ready' })).toBe(0);
  // A third create of base finds the pool empty, is refused by the host's admission, and the pooled sandbox of the
  // other template makes room for it.
  const c = await sdk.create('base', opts);
  expect(await fromPool(c.sandboxId)).toBe(false);
  expect(pooledIDs(PRIVATE_POOL)).not.toContain(private1);
  expect(sandboxTraces(platform, stateDir, private1 as string)).toEqual([]);
  expect(await metric('sandboxkit_warm_pool_evictions_total', { template: PRIVATE_POOL })).toBe(evictedBefore + 1);
  expect(await metric('sandboxkit_warm_pool_creates_total', { template: 'base', outcome: 'missed' })).toBeGreaterThanOrEqual(1);
  for (const s of [a, b, c]) expect((await run(s.sandboxId, 'echo ok')).stdout).toBe('ok\n');
  // The host is full and the pool empty: a fourth create is refused as before pools (a 429), and nothing is left of it.
  const d = await createStatus('base', opts.apiKey);
  expect(d.status).toBe(429);
  expect(String(d.body.message)).toMatch(/the host cannot take this sandbox now: memory/);
  expect((await platform.sandboxes.all()).length).toBe(3);
  // Room again: the pool refills within what the host's admission leaves (one sandbox's room, so one sandbox).
  await kill(c.sandboxId);
  await waitFor('one pooled sandbox again', () => (Object.values(platform.sandboxes.warmPool()).flat().length === 1 ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  for (const s of [a, b]) await kill(s.sandboxId);
  await pooled('base', 1);
  await pooled(PRIVATE_POOL, 1);
  expect(await metric('sandboxkit_warm_pool_sandboxes', { template: PRIVATE_POOL, state: 'ready' })).toBe(1);
  expect(await metric('sandboxkit_warm_pool_sandboxes', { template: PRIVATE_POOL, state: 'starting' })).toBe(0);
});

test("a create the pool cannot serve (it mounts a volume) on a full host removes the other template's pooled sandbox, then its own template's", async () => {
  const [base1] = await pooled('base', 1);
  const [private1] = await pooled(PRIVATE_POOL, 1);
  const evicted = async () => ({
    base: (await metric('sandboxkit_warm_pool_evictions_total', { template: 'base' })) ?? 0,
    private: (await metric('sandboxkit_warm_pool_evictions_total', { template: PRIVATE_POOL })) ?? 0,
  });
  const before = await evicted();
  const a = await sdk.create('base', opts);
  expect(a.sandboxId).toBe(base1);
  // a, the refilled base sandbox and the private one hold all of the host's room.
  const [base2] = await pooled('base', 1, [base1 as string]);
  const volume = await sdk.volume<{ volumeId: string }>('create', 'skpl-vol', opts);
  const made = [a];
  try {
    // A create with a volume starts cold (the pool's sandboxes have nothing bound in): the other template's goes first.
    const v1 = await sdk.create('base', { ...opts, volumeMounts: { '/data': 'skpl-vol' } });
    made.push(v1);
    expect(await fromPool(v1.sandboxId)).toBe(false);
    expect(pooledIDs(PRIVATE_POOL)).toEqual([]);
    expect(sandboxTraces(platform, stateDir, private1 as string)).toEqual([]);
    expect(pooledIDs('base')).toEqual([base2]);
    expect(await evicted()).toEqual({ base: before.base, private: before.private + 1 });
    // The next finds only its own template's pooled sandbox: that one makes room, and is never handed out.
    const v2 = await sdk.create('base', { ...opts, volumeMounts: { '/data': 'skpl-vol' } });
    made.push(v2);
    expect(v2.sandboxId).not.toBe(base2);
    expect(await fromPool(v2.sandboxId)).toBe(false);
    expect(pooledIDs('base')).toEqual([]);
    expect(sandboxTraces(platform, stateDir, base2 as string)).toEqual([]);
    expect(await evicted()).toEqual({ base: before.base + 1, private: before.private + 1 });
    await run(v1.sandboxId, 'echo shared > /data/f');
    expect((await run(v2.sandboxId, 'cat /data/f')).stdout).toBe('shared\n');
    expect((await run(a.sandboxId, 'echo ok')).stdout).toBe('ok\n');
  } finally {
    for (const s of made) await kill(s.sandboxId);
    expect(await sdk.volume('destroy', volume.volumeId, opts)).toBe(true);
  }
  await pooled('base', 1);
  await pooled(PRIVATE_POOL, 1);
});

test('the pool exhausted under load: concurrent creates on a host full with pooled sandboxes all succeed, from the pool or cold', async () => {
  await pooled('base', 1);
  await pooled(PRIVATE_POOL, 1);
  // Room for three: the two pooled sandboxes make room for two cold creates, whatever refills race with them.
  const results = await Promise.allSettled([1, 2, 3].map(() => sdk.create('base', opts)));
  const made = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const warm = await Promise.all(made.map((s) => fromPool(s.sandboxId)));
    // The pooled one, and a refill a later create may take.
    expect(warm.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    for (const s of made) expect((await run(s.sandboxId, 'echo ok')).stdout).toBe('ok\n');
    expect((await platform.sandboxes.all()).length).toBe(3);
  } finally {
    for (const s of made) await kill(s.sandboxId);
  }
  await pooled('base', 1);
  await pooled(PRIVATE_POOL, 1);
});
