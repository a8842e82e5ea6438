/**
 * The warm pool against the real platform (runtime, network, agent, gateway), driven by the unmodified E2B SDK: a
 * pool of 2 `base` sandboxes serves creates and refills; creates beyond it start cold and none fails; a pooled
 * sandbox that dies is replaced and never handed out; one given to a team and killed is never given to another; a
 * team's quota holds against concurrent creates from a full pool (the refused ones leave the pool untouched); a
 * template's rebuild or deletion removes its pooled sandbox; and
 * from inside a pooled sandbox nothing of another create is visible, nor can it reach a pooled sandbox's agent. Root
 * only; one link into the root network namespace on a /24 of its own, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import { waitFor } from '../../../src/util/poll';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { adminCall, sandboxTraces, startPlatformAndGateway } from './helpers/platform-and-gateway';

jest.setTimeout(240_000);

const POOL = 2;
/** A template this file builds twice and deletes, with a pool of 1. */
const REBUILT = 'pool-rebuilt';
let stateDir: string;
let rootfs: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  rootfs = await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skp-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, {
    platform: { warmPool: { base: POOL, [REBUILT]: 1 }, warmPoolCheckMs: 300 },
  }));
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const pooledIDs = (): string[] => (platform.sandboxes.warmPool().base ?? []).map((s) => s.sandboxID);

/** Waits (bounding only a hang) until the pool holds POOL sandboxes, none of `not`; answers their IDs. */
function poolFull(not: string[] = []): Promise<string[]> {
  return waitFor(
    'a full warm pool',
    () => {
      const ids = pooledIDs();
      return ids.length === POOL && !ids.some((id) => not.includes(id)) ? ids : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 100, describe: () => `pool: ${JSON.stringify(pooledIDs())}` },
  );
}

async function detail(sandboxID: string, apiKey = opts.apiKey): Promise<{ envdAccessToken: string; metadata: unknown }> {
  const res = await fetch(`${opts.apiUrl}/sandboxes/${sandboxID}`, { headers: { 'x-api-key': apiKey } });
  expect(res.status).toBe(200);
  return (await res.json()) as { envdAccessToken: string; metadata: unknown };
}

/** Whether the platform's log of the sandbox says its create was served from the warm pool. */
async function fromPool(sandboxID: string, apiKey = opts.apiKey): Promise<boolean> {
  const res = await fetch(`${opts.apiUrl}/sandboxes/${sandboxID}/logs`, { headers: { 'x-api-key': apiKey } });
  const body = (await res.json()) as { logEntries: Array<{ message: string }> };
  const ready = body.logEntries.map((e) => e.message).find((m) => m.startsWith('sandbox ready in'));
  expect(ready).toBeDefined();
  return /from the warm pool/.test(ready as string);
}

/** A Stat through the gateway with `token`, as the SDK sends it. */
async function statStatus(sandboxID: string, token: string): Promise<number> {
  const res = await fetch(`${opts.sandboxUrl}/filesystem.Filesystem/Stat`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'connect-protocol-version': '1',
      'E2b-Sandbox-Id': sandboxID,
      'E2b-Sandbox-Port': '49983',
      'X-Access-Token': token,
    },
    body: JSON.stringify({ path: '/' }),
    signal: AbortSignal.timeout(20_000),
  });
  await res.body?.cancel();
  return res.status;
}

const run = (sandboxID: string, cmd: string) => sdk.call<{ stdout: string; exitCode: number }>(sandboxID, 'commands.run', cmd);

/** SIGKILLs every host process in the sandbox's cgroup; answers how many there were. */
function killSandboxProcesses(sandboxID: string): number {
  let n = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cgroup = '';
    try {
      cgroup = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    } catch {
      continue;
    }
    if (!cgroup.includes(`sandbox-kit-${platform.instance}/${sandboxID}`)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      n += 1;
    } catch {
      // Gone already.
    }
  }
  return n;
}

async function kill(sandboxID: string): Promise<void> {
  expect(await sdk.call(sandboxID, 'kill')).toBe(true);
  expect(sandboxTraces(platform, stateDir, sandboxID)).toEqual([]);
}

test('a create is served from the pool and works with its own token, env vars and metadata; the pool refills', async () => {
  const before = await poolFull();
  const a = await sdk.create('base', { ...opts, envs: { GREETING: 'warm' }, metadata: { suite: 'pool' } });
  expect(before).toContain(a.sandboxId);
  expect(await fromPool(a.sandboxId)).toBe(true);
  expect((await run(a.sandboxId, 'echo "$GREETING from $(whoami) in $PWD"')).stdout).toBe('warm from user in /home/user\n');
  await sdk.call(a.sandboxId, 'files.write', '/home/user/note.txt', 'written after the take');
  expect(await sdk.call(a.sandboxId, 'files.read', '/home/user/note.txt')).toBe('written after the take');
  const info = await detail(a.sandboxId);
  expect(info.metadata).toEqual({ suite: 'pool' });

  // The pool refills with new sandboxes; the next create takes one of them.
  const after = await poolFull([a.sandboxId]);
  const b = await sdk.create('base', opts);
  expect(after).toContain(b.sandboxId);
  expect(await fromPool(b.sandboxId)).toBe(true);
  const tokenB = (await detail(b.sandboxId)).envdAccessToken;
  // Each sandbox answers its own token only.
  expect(await statStatus(a.sandboxId, info.envdAccessToken)).toBe(200);
  expect(await statStatus(b.sandboxId, tokenB)).toBe(200);
  expect(await statStatus(b.sandboxId, info.envdAccessToken)).toBe(401);
  expect(await statStatus(a.sandboxId, tokenB)).toBe(401);
  await kill(a.sandboxId);
  await kill(b.sandboxId);
});

test('attack: nothing of an earlier create is visible in a pooled sandbox, and a pooled agent refuses every caller', async () => {
  await poolFull();
  const a = await sdk.create('base', { ...opts, envs: { LEAK_ME: 'secret-of-a' } });
  await run(a.sandboxId, 'echo secret > /home/user/left-by-a; echo "export LEAK_ME2=1" >> /home/user/.bashrc');
  await kill(a.sandboxId);
  await poolFull([a.sandboxId]);
  const waiting = platform.sandboxes.warmPool().base ?? [];
  const b = await sdk.create('base', opts);
  expect(await fromPool(b.sandboxId)).toBe(true);
  // b's home is the template's, its environment has nothing of a's.
  const home = await run(b.sandboxId, 'ls -A /home/user | sort');
  const expected = fs
    .readdirSync(join(rootfs, 'home', 'user'))
    .sort()
    .map((n) => `${n}\n`)
    .join('');
  expect(home.stdout).toBe(expected);
  const env = (await run(b.sandboxId, 'env')).stdout;
  expect(env).not.toMatch(/LEAK_ME|secret-of-a/);
  expect((await run(b.sandboxId, 'grep -c LEAK_ME2 /home/user/.bashrc || true')).stdout.trim()).toBe('0');

  // From inside b, the agent of a sandbox still waiting in the pool takes no /init and no call of anyone else.
  const target = waiting.find((s) => s.sandboxID !== b.sandboxId) as { sandboxID: string; address: string };
  expect(target).toBeDefined();
  const forged = `${target.sandboxID}.${'x'.repeat(40)}`;
  const attempts = await run(
    b.sandboxId,
    [
      `curl -s -m 5 -o /dev/null -w '%{http_code} ' -X POST -H 'content-type: application/json' -d '{"accessToken":"${forged}","envVars":{"PWNED":"1"}}' http://${target.address}:49983/init`,
      `curl -s -m 5 -o /dev/null -w '%{http_code} ' -X POST -H 'content-type: application/json' -H 'connect-protocol-version: 1' -d '{"path":"/"}' http://${target.address}:49983/filesystem.Filesystem/ListDir`,
      `curl -s -m 5 -o /dev/null -w '%{http_code}' http://${target.address}:49983/envs`,
      'true',
    ].join('; '),
  );
  // Each is refused (401) or never reaches it (000): no 2xx.
  for (const code of attempts.stdout.trim().split(' ')) expect(['000', '401']).toContain(code);
  // The legitimate use of that same pooled sandbox still works: the next create takes it, with its own token.
  const c = await sdk.create('base', { ...opts, envs: { MINE: 'c' } });
  expect(c.sandboxId).toBe(target.sandboxID);
  expect((await run(c.sandboxId, 'echo "$MINE$PWNED"')).stdout).toBe('c\n');
  await kill(b.sandboxId);
  await kill(c.sandboxId);
});

test('the pool exhausted: creates beyond it start cold and none fails; a cold sandbox has the same environment', async () => {
  await poolFull();
  const made = await Promise.all(Array.from({ length: POOL + 3 }, () => sdk.create('base', opts)));
  const pooled = await Promise.all(made.map((s) => fromPool(s.sandboxId)));
  // A refill may land before the last creates take: at least one of each, never more pooled than there were.
  expect(pooled.filter(Boolean).length).toBeGreaterThanOrEqual(1);
  expect(pooled.filter((p) => !p).length).toBeGreaterThanOrEqual(1);
  const envKeys = async (id: string) => (await run(id, 'env | cut -d= -f1 | grep -v -e ^HOSTNAME$ | sort')).stdout;
  const warm = made[pooled.indexOf(true)]!.sandboxId;
  const cold = made[pooled.indexOf(false)]!.sandboxId;
  expect(await envKeys(warm)).toBe(await envKeys(cold));
  for (const s of made) {
    expect((await run(s.sandboxId, 'echo ok')).stdout).toBe('ok\n');
    await kill(s.sandboxId);
  }
});

test('a pooled sandbox that dies is never handed out, and is replaced', async () => {
  const [dead] = await poolFull();
  // Every process of that sandbox (its init and its agent) killed from the host.
  const killed = killSandboxProcesses(dead as string);
  expect(killed).toBeGreaterThan(0);
  const made = [await sdk.create('base', opts), await sdk.create('base', opts)];
  expect(made.map((s) => s.sandboxId)).not.toContain(dead);
  for (const s of made) expect((await run(s.sandboxId, 'echo alive')).stdout).toBe('alive\n');
  await poolFull([dead as string]);
  await waitFor('the dead sandbox removed', () => (sandboxTraces(platform, stateDir, dead as string).length === 0 ? true : undefined), {
    timeoutMs: 60_000,
  });
  for (const s of made) await kill(s.sandboxId);
});

test('a pooled sandbox given to one team and killed is never given to another', async () => {
  const admin = (method: string, path: string, body: unknown) => adminCall(opts, method, path, body);
  const keys: string[] = [];
  for (const name of ['pool-a', 'pool-b']) {
    await admin('POST', '/admin/teams', { name, quotas: {} });
    keys.push((await admin('POST', '/admin/keys', { team: name, name: 'k' })).key as string);
  }
  await poolFull();
  const a = await sdk.create('base', { ...opts, apiKey: keys[0] });
  expect(await fromPool(a.sandboxId, keys[0])).toBe(true);
  await run(a.sandboxId, 'echo team-a > /home/user/a.txt');
  await kill(a.sandboxId);
  const refilled = await poolFull([a.sandboxId]);
  const b = await sdk.create('base', { ...opts, apiKey: keys[1] });
  expect(refilled).toContain(b.sandboxId);
  expect(b.sandboxId).not.toBe(a.sandboxId);
  expect((await run(b.sandboxId, 'ls /home/user/a.txt 2>&1 || true')).stdout).toMatch(/No such file/);
  // a's ID is gone for good: not in the pool, not reachable, not listed for anyone.
  expect(pooledIDs()).not.toContain(a.sandboxId);
  const listed = await fetch(`${opts.apiUrl}/sandboxes/${a.sandboxId}`, { headers: { 'x-api-key': keys[1] } });
  expect(listed.status).toBe(404);
  await kill(b.sandboxId);
});

test("a team's quota holds against concurrent creates from a full pool; a refused create's env vars reach no sandbox", async () => {
  const admin = (method: string, path: string, body: unknown) => adminCall(opts, method, path, body);
  await admin('POST', '/admin/teams', { name: 'pool-quota', quotas: { sandboxes: 1 } });
  const key = (await admin('POST', '/admin/keys', { team: 'pool-quota', name: 'k' })).key as string;
  const pooled = await poolFull();
  const answers = await Promise.all(
    [1, 2, 3, 4].map(async (i) => {
      const res = await fetch(`${opts.apiUrl}/sandboxes`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ templateID: 'base', envVars: { CALLER: `create-${i}` } }),
      });
      return { status: res.status, body: (await res.json()) as { sandboxID?: string; message?: string } };
    }),
  );
  const made = answers.filter((a) => a.status === 201);
  expect(made).toHaveLength(1);
  const refused = answers.filter((a) => a.status === 429);
  expect(refused).toHaveLength(3);
  for (const r of refused) expect(r.body.message).toMatch(/quota exceeded.*sandboxes/);
  const winner = made[0]!.body.sandboxID as string;
  expect(pooled).toContain(winner);
  const listed = await fetch(`${opts.apiUrl}/v2/sandboxes`, { headers: { 'x-api-key': key } });
  expect(((await listed.json()) as Array<{ sandboxID: string }>).map((s) => s.sandboxID)).toEqual([winner]);
  await sdk.connect(winner, { ...opts, apiKey: key });
  expect((await run(winner, 'echo "$CALLER"')).stdout).toMatch(/^create-[1-4]\n$/);
  // The other pooled sandbox was put back untouched by the refused creates: the next create takes it, without their env vars.
  const other = pooled.find((id) => id !== winner) as string;
  expect(pooledIDs()).toContain(other);
  const next = await sdk.create('base', opts);
  expect(next.sandboxId).toBe(other);
  expect((await run(next.sandboxId, 'echo "[$CALLER]"')).stdout).toBe('[]\n');
  // Killing the team's sandbox gives its quota back.
  await kill(winner);
  const again = await sdk.create('base', { ...opts, apiKey: key });
  await kill(again.sandboxId);
  await kill(next.sandboxId);
});

test('a template rebuilt or deleted: its pooled sandbox is removed, never handed out, and the new build pooled', async () => {
  const pooledOf = () => (platform.sandboxes.warmPool()[REBUILT] ?? []).map((s) => s.sandboxID);
  const one = (not: string[]) =>
    waitFor(
      `a pooled sandbox of ${REBUILT}`,
      () => {
        const ids = pooledOf();
        return ids.length === 1 && !not.includes(ids[0] as string) ? (ids[0] as string) : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, describe: () => JSON.stringify(pooledOf()) },
    );
  // Nothing is pooled of a template that does not exist yet.
  expect(pooledOf()).toEqual([]);
  const { templateId } = await sdk.build(REBUILT, 'echo first | sudo tee /etc/built-by', opts);
  const first = await one([]);
  await sdk.build(REBUILT, 'echo second | sudo tee /etc/built-by', opts);
  const second = await one([first]);
  await waitFor("the first build's sandbox removed", () => (sandboxTraces(platform, stateDir, first).length === 0 ? true : undefined), {
    timeoutMs: 60_000,
  });
  const s = await sdk.create(REBUILT, opts);
  expect(s.sandboxId).toBe(second);
  expect((await run(s.sandboxId, 'cat /etc/built-by')).stdout).toBe('second\n');
  await kill(s.sandboxId);
  const next = await one([second]);
  const deleted = await fetch(`${opts.apiUrl}/templates/${templateId}`, { method: 'DELETE', headers: { 'x-api-key': opts.apiKey } });
  expect(deleted.status).toBeLessThan(300);
  await waitFor("the deleted template's pool empty", () => (pooledOf().length === 0 ? true : undefined), { timeoutMs: 60_000 });
  await waitFor('its sandbox removed', () => (sandboxTraces(platform, stateDir, next).length === 0 ? true : undefined), {
    timeoutMs: 60_000,
  });
});
