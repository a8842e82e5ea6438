/**
 * Teams, keys, quotas and the audit trail on a real Redis: the quota ledger under concurrency (also from two
 * clients, as two fleet hosts would be), revocation at the next request, quota changes below current use, the
 * request rate limit, and the bounded trail.
 */
import Redis from 'ioredis';
import { AuditLog } from '../../../src/platform/teams/audit';
import { TeamAuthenticator } from '../../../src/platform/teams/authenticator';
import { TeamMetrics } from '../../../src/platform/teams/metrics';
import { QuotaLedger } from '../../../src/platform/teams/quotas';
import { TeamStore } from '../../../src/platform/teams/store';
import { ApiError } from '../../../src/platform/http/types';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';

let server: ThrowawayRedis;
let hostA: Redis;
let hostB: Redis;

beforeAll(async () => {
  server = await startRedis();
  hostA = new Redis(server.url);
  hostB = new Redis(server.url);
});

afterAll(async () => {
  hostA?.disconnect();
  hostB?.disconnect();
  await server?.stop();
});

beforeEach(async () => {
  await hostA.flushall();
});

async function refusal(work: Promise<unknown>): Promise<ApiError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

test('20 reservations at once from two hosts against a quota of 5: exactly 5 pass, 15 get 429, and releases free slots', async () => {
  const store = new TeamStore(hostA);
  const team = await store.createTeam('ci', { sandboxes: 5, vcpus: 100 });
  const ledgers = [new QuotaLedger(hostA, 'host-a'), new QuotaLedger(hostB, 'host-b')];
  const results = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => ledgers[i % 2]!.reserve(team.teamID, `sandbox:s${i}`, { sandboxes: 1, vcpus: 2, memoryMiB: 512 })),
  );
  const passed = results.filter((r) => r.status === 'fulfilled').length;
  const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as ApiError);
  expect(passed).toBe(5);
  expect(refused).toHaveLength(15);
  for (const err of refused) {
    expect(err.code).toBe(429);
    expect(err.message).toContain('concurrent sandboxes (sandboxes) is 5 for this team, which uses 5 now');
  }
  expect(await ledgers[0]!.usage(team.teamID)).toEqual({ sandboxes: 5, vcpus: 10, memoryMiB: 2560, builds: 0, templateBytes: 0 });

  const holder = results.findIndex((r) => r.status === 'fulfilled');
  expect(await ledgers[holder % 2]!.release(team.teamID, `sandbox:s${holder}`)).toBe(true);
  // A second release of the same hold gives nothing back twice.
  expect(await ledgers[0]!.release(team.teamID, `sandbox:s${holder}`)).toBe(false);
  expect((await ledgers[0]!.usage(team.teamID)).sandboxes).toBe(4);
  await ledgers[1]!.reserve(team.teamID, 'sandbox:again', { sandboxes: 1, vcpus: 2 });
  expect((await ledgers[0]!.usage(team.teamID)).sandboxes).toBe(5);
});

test('a vCPU quota refuses the sandbox that would pass it, naming quota, value and use; another team is not affected', async () => {
  const store = new TeamStore(hostA);
  const small = await store.createTeam('small', { vcpus: 3 });
  const other = await store.createTeam('other', {});
  const ledger = new QuotaLedger(hostA);
  await ledger.reserve(small.teamID, 'sandbox:one', { sandboxes: 1, vcpus: 2 });
  const err = await refusal(ledger.reserve(small.teamID, 'sandbox:two', { sandboxes: 1, vcpus: 2 }));
  expect(err.code).toBe(429);
  expect(err.message).toBe('quota exceeded: vCPUs (vcpus) is 3 for this team, which uses 2 now and asked for 2 more; nothing was made');
  expect((await ledger.usage(small.teamID)).sandboxes).toBe(1);
  await ledger.reserve(other.teamID, 'sandbox:three', { sandboxes: 1, vcpus: 64 });
});

test('a quota set below current use is refused and changes nothing; null removes a quota', async () => {
  const store = new TeamStore(hostA);
  const team = await store.createTeam('busy', { sandboxes: 10 });
  const ledger = new QuotaLedger(hostA);
  for (const id of ['a', 'b', 'c']) await ledger.reserve(team.teamID, `sandbox:${id}`, { sandboxes: 1 });
  const err = await refusal(ledger.setQuotas(team.teamID, { sandboxes: 2 }));
  expect(err.code).toBe(409);
  expect(err.message).toContain("sandboxes: 2 is below the team's current use of concurrent sandboxes (3)");
  expect((await store.team(team.teamID))?.quotas).toEqual({ sandboxes: 10 });
  expect(await ledger.setQuotas(team.teamID, { sandboxes: 3, builds: 1 })).toEqual({ sandboxes: 3, builds: 1 });
  expect(await ledger.setQuotas(team.teamID, { sandboxes: null })).toEqual({ builds: 1 });
});

test('a revoked key is refused at its next request on every client; a deleted team takes its keys along', async () => {
  const onA = new TeamStore(hostA);
  const onB = new TeamStore(hostB);
  const team = await onA.createTeam('revoking', {});
  const { key, record } = await onA.createKey(team.teamID, 'ci', 'member');
  expect(JSON.stringify(await hostA.hgetall('sandbox-kit:teams:keys'))).not.toContain(key);
  expect((await onB.authenticate(key))?.key).toEqual(record);
  expect(await onA.revokeKey(record.keyID)).toBe(true);
  expect(await onB.authenticate(key)).toBeUndefined();
  expect(await onA.revokeKey(record.keyID)).toBe(false);

  const second = await onA.createKey(team.teamID, 'other', 'member');
  await onA.deleteTeam(team);
  expect(await onB.authenticate(second.key)).toBeUndefined();
});

test('a team name is unique, two creates of one name at once: one wins', async () => {
  const store = new TeamStore(hostA);
  const results = await Promise.allSettled([store.createTeam('same', {}), new TeamStore(hostB).createTeam('same', {})]);
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  expect(((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as ApiError).code).toBe(409);
});

test('the request rate limit counts per key per second and answers 429 with Retry-After', async () => {
  const store = new TeamStore(hostA);
  const team = await store.createTeam('chatty', { requestsPerSecond: 3 });
  const auth = new TeamAuthenticator(store);
  const first = await store.createKey(team.teamID, 'one', 'member');
  const second = await store.createKey(team.teamID, 'two', 'member');
  // Seven calls within two consecutive seconds: at most 3 + 3 fit, so one is refused wherever the second's boundary
  // falls. Calls that spread over three seconds (a very slow machine) are made again.
  let verdicts: Awaited<ReturnType<typeof auth.check>>[] = [];
  for (let round = 0; round < 5; round++) {
    const from = Math.floor(Date.now() / 1000);
    verdicts = [];
    for (let i = 0; i < 7; i++) verdicts.push(await auth.check(first.key));
    if (Math.floor(Date.now() / 1000) - from <= 1) break;
    await new Promise((r) => setTimeout(r, 2_000)); // the counts of those seconds expire
  }
  const statuses = verdicts.map((v) => (v.ok ? 200 : v.status));
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
  const refused = verdicts.find((v) => !v.ok);
  expect(refused && !refused.ok && refused.headers?.['retry-after']).toBe('1');
  expect(refused && !refused.ok && refused.message).toContain('requestsPerSecond');
  // The other key of the team has its own count.
  expect((await auth.check(second.key)).ok).toBe(true);
});

test("a key's check writes nothing to the append-only file, and its count still limits", async () => {
  const durable = await startRedis();
  const client = new Redis(durable.url);
  try {
    await client.config('SET', 'appendfsync', 'always');
    await client.config('SET', 'appendonly', 'yes');
    const aof = async () => {
      const info = await client.info('persistence');
      const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
      return {
        rewriting: field('aof_rewrite_in_progress') === '1' || field('aof_rewrite_scheduled') === '1',
        size: Number(field('aof_current_size')),
      };
    };
    // Turning the file on rewrites it from the data set once; sizes are compared after that.
    const deadline = Date.now() + 30_000;
    while ((await aof()).rewriting) {
      if (Date.now() > deadline) throw new Error('the append-only file was not rewritten within 30 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const store = new TeamStore(client);
    const team = await store.createTeam('durable', { requestsPerSecond: 2 });
    const { key } = await store.createKey(team.teamID, 'one', 'member');
    const before = (await aof()).size;
    const auth = new TeamAuthenticator(store);
    const verdicts = [];
    for (let i = 0; i < 6; i++) verdicts.push(await auth.check(key));
    expect((await aof()).size).toBe(before);
    // Counted all the same (a second boundary may fall between the calls: at most one restart of the count).
    expect(verdicts.filter((v) => !v.ok).length).toBeGreaterThanOrEqual(2);
    // A write that must last (a quota hold) does reach the file: the size above would have shown a counter's.
    await new QuotaLedger(client).reserve(team.teamID, 'sandbox:s1', { sandboxes: 1 });
    expect((await aof()).size).toBeGreaterThan(before);
  } finally {
    client.disconnect();
    await durable.stop();
  }
});

test('the audit trail is newest first, filtered by team and action, and bounded', async () => {
  const audit = new AuditLog(hostA, 'sandbox-kit:teams:', 50);
  for (let i = 0; i < 300; i++)
    await audit.record({
      at: new Date().toISOString(),
      teamID: i % 2 ? 'a' : 'b',
      keyID: `k${i}`,
      action: i % 3 ? 'sandbox.create' : 'sandbox.kill',
      target: `s${i}`,
      from: '127.0.0.1',
      status: 201,
    });
  expect(await hostA.xlen('sandbox-kit:teams:audit')).toBeLessThan(300);
  const latest = await audit.query({ limit: 2 });
  expect(latest.map((e) => e.target)).toEqual(['s299', 's298']);
  const kills = await audit.query({ teamID: 'a', action: 'sandbox.kill', limit: 3 });
  expect(kills.map((e) => e.target)).toEqual(['s297', 's291', 's285']);
});

test('metrics: each hold taken or given back is a sample of the concurrent sandboxes', async () => {
  const store = new TeamStore(hostA);
  const team = await store.createTeam('measured', {});
  const metrics = new TeamMetrics(hostA);
  const ledger = new QuotaLedger(hostA, 'local', undefined, metrics);
  // Samples of one millisecond have no order among them: these are a few apart.
  const tick = () => new Promise((r) => setTimeout(r, 3));
  await ledger.reserve(team.teamID, 'sandbox:x', { sandboxes: 1 });
  await tick();
  await ledger.reserve(team.teamID, 'sandbox:y', { sandboxes: 1 });
  await tick();
  await ledger.release(team.teamID, 'sandbox:x');
  const samples = await metrics.samples(team.teamID, Date.now() - 10_000, Date.now());
  expect(samples.map((s) => [s.concurrent, s.started])).toEqual([
    [1, true],
    [2, true],
    [1, false],
  ]);
});
