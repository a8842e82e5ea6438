/**
 * Persistence on the real runtime, driven by the unmodified E2B SDK: pause to disk (processes and cgroups gone,
 * files kept, resumed with the same ID, token and env vars by connect, by the gateway's auto-resume and after a
 * platform restart), the move of a memory-paused sandbox to disk and the retention, snapshots (create from one,
 * list, delete) and fork. Root only; one link into the root namespace on a /24 of its own.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import type { AgentPayload } from '../../../src/runtime/agent-payload';
import { hostCgroupMounts } from '../../../src/runtime/cgroups';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { adminCall, startPlatformAndGateway, sandboxTraces } from './helpers/platform-and-gateway';

jest.setTimeout(180_000);

/** Short enough to watch both happen in a test; the tests that resume do so well within the retention. */
const PAUSED = { toDiskAfterMs: 3_000, retentionMs: 10_000 };

let stateDir: string;
let agent: AgentPayload;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

async function start(): Promise<void> {
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, { platform: { paused: PAUSED } }));
}

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skp-'));
  agent = await freshAgentPayload(join(stateDir, 'bundle'));
  await start();
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  // Shutdown keeps paused sandboxes on disk for the next start: these are removed first.
  for (const record of (await platform?.sandboxes.all()) ?? []) await platform.sandboxes.kill(record.sandboxID).catch(() => {});
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const traces = (sandboxID: string): string[] => sandboxTraces(platform, stateDir, sandboxID);

async function token(sandboxID: string): Promise<string> {
  const res = await fetch(`${opts.apiUrl}/sandboxes/${sandboxID}`, { headers: { 'x-api-key': opts.apiKey } });
  return ((await res.json()) as { envdAccessToken: string }).envdAccessToken;
}

async function run(sandboxID: string, cmd: string): Promise<string> {
  return (await sdk.call<{ stdout: string }>(sandboxID, 'commands.run', cmd)).stdout;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Of a disk-paused sandbox only its directory (its files) is left: no process, cgroup, runtime state or netns. */
function onlyFilesLeft(sandboxID: string): void {
  const left = traces(sandboxID);
  // Its directory, its disk's image and its console log: no mount, process, cgroup or namespace.
  expect(left.filter((t) => !/^(sandbox dir|file) /.test(t))).toEqual([]);
  expect(left.filter((t) => /^sandbox dir /.test(t))).toHaveLength(1);
}

test('pause to disk frees the processes and cgroups; connect starts it again with its files, token and env vars', async () => {
  const s = await sdk.create('base', { ...opts, envs: { GREETING: 'hello' } });
  await sdk.call(s.sandboxId, 'files.write', '/home/user/note.txt', 'kept on disk');
  const before = await token(s.sandboxId);
  expect(traces(s.sandboxId).some((t) => t.startsWith('cgroup '))).toBe(true);

  expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  onlyFilesLeft(s.sandboxId);
  expect(await sdk.call<{ state: string }>(s.sandboxId, 'getInfo')).toMatchObject({ state: 'paused' });
  expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(false);

  await sdk.connect(s.sandboxId, opts);
  expect(await token(s.sandboxId)).toBe(before);
  expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/note.txt')).toBe('kept on disk');
  expect(await run(s.sandboxId, 'echo "$GREETING from $(whoami)"')).toBe('hello from user\n');
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
  expect(traces(s.sandboxId)).toEqual([]);
});

/** Bytes charged to the sandbox's memory cgroup now (cgroup v2 memory.current or v1 memory.usage_in_bytes). */
function memoryCharged(sandboxID: string): { bytes: number; pids: number[] } | undefined {
  for (const trace of traces(sandboxID).filter((t) => t.startsWith('cgroup '))) {
    const dir = trace.slice('cgroup '.length);
    for (const file of ['memory.current', 'memory.usage_in_bytes']) {
      if (!fs.existsSync(join(dir, file))) continue;
      const pids = fs.readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      return { bytes: Number(fs.readFileSync(join(dir, file), 'utf8').trim()), pids };
    }
  }
  return undefined;
}

/**
 * Bytes charged to every sandbox of this platform together: the memory cgroup all of them are children of, hierarchical
 * (cgroup v2 memory.current, v1 memory.usage_in_bytes). Only this file's sandboxes are in it, one test at a time, so
 * other work on the host does not move it as it moves the host's MemAvailable.
 */
function platformMemory(): number {
  for (const m of hostCgroupMounts()) {
    const dir = join(m.mountPoint, `sandbox-kit-${platform.instance}`);
    for (const file of ['memory.current', 'memory.usage_in_bytes'])
      if (fs.existsSync(join(dir, file))) return Number(fs.readFileSync(join(dir, file), 'utf8').trim());
  }
  throw new Error(`no memory cgroup sandbox-kit-${platform.instance} under the host's cgroup mounts`);
}

test('pause to disk frees what the sandbox held in memory: its memory cgroup and the process holding it are gone, the platform holds 200 MiB less; connect starts it again with its files', async () => {
  // A second sandbox keeps the platform's cgroup there (the runtime removes it with the last sandbox).
  const keeper = await sdk.create('base', opts);
  const s = await sdk.create('base', opts);
  await sdk.call(s.sandboxId, 'files.write', '/home/user/kept.txt', 'on its disk');
  const MiB = 1024 * 1024;
  // 200 MiB of touched memory, held by a process that sleeps.
  await run(s.sandboxId, `setsid python3 -c 'import time; b = b"x" * (200 * 1024 * 1024); time.sleep(600)' > /dev/null 2>&1 < /dev/null &`);
  let held: { bytes: number; pids: number[] } | undefined;
  await until('200 MiB charged to the sandbox', async () => {
    held = memoryCharged(s.sandboxId);
    return (held?.bytes ?? 0) >= 200 * MiB;
  });
  const holder = (held as { pids: number[] }).pids.find((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('time.sleep(600)');
    } catch {
      return false;
    }
  });
  expect(holder).toBeDefined();
  const before = platformMemory();
  expect(before).toBeGreaterThanOrEqual(200 * MiB);

  expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  expect(memoryCharged(s.sandboxId)).toBeUndefined();
  onlyFilesLeft(s.sandboxId);
  const gone = !fs.existsSync(`/proc/${holder}`) || /\) Z /.test(fs.readFileSync(`/proc/${holder}/stat`, 'utf8'));
  expect(gone).toBe(true);
  // The 200 MiB went back to the host: the sandboxes' common cgroup holds at least 150 MiB less (the rest is slack for
  // the page cache a removed cgroup hands to its parent).
  expect(before - platformMemory()).toBeGreaterThanOrEqual(150 * MiB);

  // Resumed: the same sandbox from its files (a reboot: the process that held the memory is not started again).
  await sdk.connect(s.sandboxId, opts);
  expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/kept.txt')).toBe('on its disk');
  // ("[.]": the shell running this has the pattern in its own command line, not a match of it.)
  expect(await run(s.sandboxId, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -c 'time[.]sleep(600)' || true")).toBe('0\n');
  expect(await sdk.call<{ sandboxId: string; state: string }>(s.sandboxId, 'getInfo')).toMatchObject({
    sandboxId: s.sandboxId,
    state: 'running',
  });
  for (const id of [s.sandboxId, keeper.sandboxId]) expect(await sdk.call(id, 'kill')).toBe(true);
});

test('a disk-paused sandbox with autoResume is started again by its first request through the gateway', async () => {
  const s = await sdk.create('base', { ...opts, lifecycle: { onTimeout: 'pause', autoResume: true } });
  await sdk.call(s.sandboxId, 'files.write', '/home/user/a.txt', 'A');
  expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  onlyFilesLeft(s.sandboxId);
  const entries = await sdk.call<Array<{ name: string }>>(s.sandboxId, 'files.list', '/home/user');
  expect(entries.map((e) => e.name)).toContain('a.txt');
  expect((await sdk.call<{ state: string }>(s.sandboxId, 'getInfo')).state).toBe('running');
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test('a memory-paused sandbox moves to disk after the configured time, and connect with onResume reboot starts it', async () => {
  const s = await sdk.create('base', opts);
  await sdk.call(s.sandboxId, 'files.write', '/home/user/m.txt', 'M');
  expect(await sdk.call(s.sandboxId, 'pause')).toBe(true);
  expect(traces(s.sandboxId).some((t) => t.startsWith('cgroup '))).toBe(true);
  await until('the move to disk', async () => (await platform.sandboxes.get(s.sandboxId)).pausedTo === 'disk');
  onlyFilesLeft(s.sandboxId);
  await sdk.connect(s.sandboxId, { ...opts, onResume: 'reboot' });
  expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/m.txt')).toBe('M');
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test('a paused sandbox is killed once the retention has passed', async () => {
  const s = await sdk.create('base', opts);
  expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  await until(
    'the retention',
    async () => (await platform.sandboxes.all()).every((r) => r.sandboxID !== s.sandboxId),
    PAUSED.retentionMs + 15_000,
  );
  await expect(sdk.call(s.sandboxId, 'getInfo')).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
  expect(traces(s.sandboxId)).toEqual([]);
});

test('a disk-paused sandbox outlives a stop and start of the platform', async () => {
  const s = await sdk.create('base', opts);
  await sdk.call(s.sandboxId, 'files.write', '/home/user/r.txt', 'restart');
  expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  await gateway.close();
  await platform.close();
  await start();
  expect(await sdk.call<{ state: string }>(s.sandboxId, 'getInfo', opts)).toMatchObject({ state: 'paused' });
  await sdk.connect(s.sandboxId, opts);
  expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/r.txt')).toBe('restart');
  expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
});

test('a snapshot freezes the files of a running sandbox; a sandbox made from it starts with them', async () => {
  const s = await sdk.create('base', opts);
  await sdk.call(s.sandboxId, 'files.write', '/home/user/before.txt', 'in the snapshot');
  const snap = await sdk.call<{ snapshotId: string; names: string[] }>(s.sandboxId, 'createSnapshot', { name: 'persist-test' });
  expect(snap.names).toEqual(['persist-test:default']);
  // The source runs on; what it writes now is not in the snapshot.
  await sdk.call(s.sandboxId, 'files.write', '/home/user/after.txt', 'later');
  await run(s.sandboxId, 'rm /home/user/before.txt');

  const listed = await sdk.list({ ...opts, sandboxId: s.sandboxId }, 1, 'listSnapshots');
  expect(listed[0].items).toEqual([snap]);

  for (const ref of [snap.snapshotId, 'persist-test']) {
    const c = await sdk.create(ref, opts);
    expect(await sdk.call(c.sandboxId, 'files.read', '/home/user/before.txt')).toBe('in the snapshot');
    expect(await run(c.sandboxId, 'test -e /home/user/after.txt && echo yes || echo no')).toBe('no\n');
    // In use: deleting it is refused, and it stays usable.
    await expect(sdk.static('deleteSnapshot', snap.snapshotId, opts)).rejects.toThrow(/in use by sandbox/);
    expect(await sdk.call(c.sandboxId, 'kill')).toBe(true);
  }
  expect(await sdk.static('deleteSnapshot', snap.snapshotId, opts)).toBe(true);
  expect(await sdk.static('deleteSnapshot', snap.snapshotId, opts)).toBe(false);
  await expect(sdk.create(snap.snapshotId, opts)).rejects.toThrow(/not found/);
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test('fork 3: each fork starts from the source files with its own ID and token, and then they diverge', async () => {
  const s = await sdk.create('base', { ...opts, envs: { GREETING: 'forked' } });
  await sdk.call(s.sandboxId, 'files.write', '/home/user/shared.txt', 'from the source');
  const forks = await sdk.fork(s.sandboxId, { count: 3 });
  expect(forks.every((f) => f.sandboxId !== undefined)).toBe(true);
  const ids = forks.map((f) => f.sandboxId as string);
  expect(new Set([s.sandboxId, ...ids]).size).toBe(4);
  const tokens = await Promise.all([s.sandboxId, ...ids].map(token));
  expect(new Set(tokens).size).toBe(4);
  for (const [i, id] of ids.entries()) {
    expect(await sdk.call(id, 'files.read', '/home/user/shared.txt')).toBe('from the source');
    expect(await run(id, 'echo $GREETING')).toBe('forked\n');
    await sdk.call(id, 'files.write', '/home/user/shared.txt', `fork ${i}`);
  }
  for (const [i, id] of ids.entries()) expect(await sdk.call(id, 'files.read', '/home/user/shared.txt')).toBe(`fork ${i}`);
  expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/shared.txt')).toBe('from the source');
  for (const id of [s.sandboxId, ...ids]) expect(await sdk.call(id, 'kill')).toBe(true);
});

test('bad input: fork count 0 or over the quota, unknown sandbox or snapshot: a clear 4xx and nothing made', async () => {
  const s = await sdk.create('base', opts);
  const before = (await platform.sandboxes.all()).length;
  await expect(sdk.fork(s.sandboxId, { count: 0 })).rejects.toThrow(/count.*expected a whole number of forks from 1 to 10/);
  await expect(sdk.fork(s.sandboxId, { count: 11 })).rejects.toThrow(/at most 10 forks per call/);
  await expect(sdk.static('fork', 'nosuchsandbox', { ...opts, count: 1 })).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
  await expect(sdk.static('createSnapshot', 'nosuchsandbox', opts)).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
  await expect(sdk.create('nosuchsnapshot:default', opts)).rejects.toThrow(/template "nosuchsnapshot:default" not found/);
  await expect(sdk.call(s.sandboxId, 'createSnapshot', { name: '../escape' })).rejects.toThrow(/name.*expected 1 to 128/);
  expect((await platform.sandboxes.all()).length).toBe(before);
  expect((await sdk.list(opts, 1, 'listSnapshots'))[0].items).toEqual([]);
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

const admin = (method: string, path: string, body: unknown) => adminCall(opts, method, path, body);

test("snapshots hold their bytes of the team's stored bytes: one beyond the quota is refused and leaves nothing; a delete gives them back", async () => {
  await admin('POST', '/admin/teams', { name: 'persist-bytes', quotas: { templateBytes: 3 * 1024 * 1024 } });
  const key = (await admin('POST', '/admin/keys', { team: 'persist-bytes', name: 'k' })).key as string;
  const team = { ...opts, apiKey: key };
  const s = await sdk.create('base', team);
  await run(s.sandboxId, 'head -c 2000000 /dev/urandom > /home/user/big.bin');
  const first = await sdk.call<{ snapshotId: string }>(s.sandboxId, 'createSnapshot');
  const stored = () => fs.readdirSync(join(stateDir, 'snapshots'));
  const before = stored();
  await expect(sdk.call(s.sandboxId, 'createSnapshot')).rejects.toThrow(/quota exceeded: stored bytes \(templateBytes\)/);
  expect(stored()).toEqual(before);
  expect((await sdk.list(team, 1, 'listSnapshots'))[0].items).toEqual([first]);
  expect(await sdk.static('deleteSnapshot', first.snapshotId, team)).toBe(true);
  const second = await sdk.call<{ snapshotId: string }>(s.sandboxId, 'createSnapshot');
  expect(await sdk.static('deleteSnapshot', second.snapshotId, team)).toBe(true);
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test("teams: a fork beyond the team's sandbox quota makes none; another team's snapshots and sandboxes are unknown", async () => {
  await admin('POST', '/admin/teams', { name: 'persist-small', quotas: { sandboxes: 2 } });
  const key = (await admin('POST', '/admin/keys', { team: 'persist-small', name: 'k' })).key as string;
  const small = { ...opts, apiKey: key };
  const s = await sdk.create('base', small);
  await expect(sdk.fork(s.sandboxId, { count: 2 })).rejects.toThrow(/quota exceeded.*none was kept/);
  expect((await sdk.list(small))[0].items.map((i) => i.sandboxId)).toEqual([s.sandboxId]);

  const mine = await sdk.create('base', opts);
  const snap = await sdk.call<{ snapshotId: string }>(mine.sandboxId, 'createSnapshot');
  expect((await sdk.list(small, 1, 'listSnapshots'))[0].items).toEqual([]);
  await expect(sdk.create(snap.snapshotId, small)).rejects.toThrow(/not found/);
  expect(await sdk.static('deleteSnapshot', snap.snapshotId, small)).toBe(false);
  await expect(sdk.static('fork', mine.sandboxId, { ...small, count: 1 })).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
  await expect(sdk.static('createSnapshot', mine.sandboxId, small)).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });

  expect(await sdk.static('deleteSnapshot', snap.snapshotId, opts)).toBe(true);
  for (const id of [s.sandboxId, mine.sandboxId]) expect(await sdk.static('kill', id, opts)).toBe(true);
});
