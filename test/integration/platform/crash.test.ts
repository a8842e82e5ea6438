/**
 * Crash safety: `sandbox-kit platform` is killed with SIGKILL in the middle of a create (at two different moments),
 * started again on the same state dir, and afterwards the sandboxes it lists are exactly the containers running,
 * the sandbox made before the crash still answers with its token, and the half-made one left no network namespace,
 * runtime state, cgroup, mount (in any mount namespace) or directory; killed with a full warm pool, it leaves nothing
 * of the pool's sandboxes after its restart. Root only; one link into the root namespace on a /24 of its own, so it runs beside the other test files.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostCgroupMounts } from '../../../src/runtime/cgroups';
import { cleanupLeftovers } from '../../../src/runtime/cleanup';
import { POOL_DIR } from '../../../src/runtime/disk-pool';
import { DEFAULT_STATE_ROOT, STEPS_DATA_DIR } from '../../../src/runtime/instance';
import { openSandboxHostNetwork } from '../../../src/runtime/network/host-network';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { baseRootfs, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { bundleForNode } from '../../helpers/node-bundle';
import { CLI_SOURCE } from '../../helpers/cli';
import { killPlatformProcess, shutDownLeftRedis, startPlatformProcess, type PlatformProcess } from '../../helpers/platform-process';
import { SdkDriver } from './helpers/sdk-driver';

jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..', '..');
/** Inside the project, so the runtime finds the agent bundle from the CLI's location as it does when installed. */
const CLI = join(ROOT, 'dist', 'test-platform', 'cli.js');

let stateDir: string;
let child: ChildProcess | undefined;
/** What the platforms of the running test wrote to stderr (their logs), for the failure messages. */
let platformLog = '';

/** `onStderr`: told each chunk the platform writes to stderr (its log). */
async function startCli(args: string[] = [], onStderr?: (text: string) => void): Promise<PlatformProcess> {
  platformLog += `--- platform started ${args.join(' ')}\n`;
  const running = await startPlatformProcess(CLI, stateDir, args, (text) => {
    platformLog += text;
    onStderr?.(text);
  });
  child = running.proc;
  return running;
}

async function killHard(): Promise<void> {
  await killPlatformProcess(child as ChildProcess);
  child = undefined;
}

const api = (p: PlatformProcess, method: string, path: string, body?: unknown) =>
  fetch(`${p.url}${path}`, {
    method,
    headers: { 'x-api-key': p.key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

function instance(): string {
  return fs.readFileSync(join(stateDir, 'instance'), 'utf8').trim();
}

/** What this instance has on the host, per sandbox ID: network namespaces, runtime state, cgroups, bundle dirs, mounts. */
function hostTraces(withMounts = true): Record<string, string[]> {
  const name = instance();
  const out: Record<string, string[]> = {};
  const add = (id: string, what: string) => (out[id] ??= []).push(what);
  for (const ns of fs.readdirSync('/run/netns')) if (ns.startsWith(`${name}-`)) add(ns.slice(name.length + 1), 'netns');
  for (const rt of ['crun', 'runc']) {
    const dir = join(DEFAULT_STATE_ROOT, name, rt);
    if (fs.existsSync(dir)) for (const id of fs.readdirSync(dir)) if (fs.statSync(join(dir, id)).isDirectory()) add(id, `${rt} state`);
  }
  for (const m of hostCgroupMounts()) {
    const dir = join(m.mountPoint, `sandbox-kit-${name}`);
    if (fs.existsSync(dir))
      for (const id of fs.readdirSync(dir)) if (fs.statSync(join(dir, id)).isDirectory()) add(id, `cgroup ${m.mountPoint}`);
  }
  const data = join(stateDir, 'runtime', name);
  // A sandbox's disk image and console log lie beside its directory (<id>.disk, <id>.console.log). The runtime's own
  // directories there (ready disks, build steps) start with a dot (disk-pool.ts POOL_DIR, instance.ts STEPS_DATA_DIR).
  if (fs.existsSync(data))
    for (const entry of fs.readdirSync(data)) {
      if (entry === POOL_DIR || entry === STEPS_DATA_DIR) continue;
      const [id, beside] = entry.split('.');
      add(id as string, beside === undefined ? 'dir' : beside);
    }
  // Mounts in any mount namespace on the host (the runtime mounts in a private one).
  for (const pid of withMounts ? fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)) : []) {
    let text = '';
    try {
      text = fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const point = line.split(' ')[4];
      if (point?.startsWith(`${data}/`)) add(point.slice(data.length + 1).split('/')[0] as string, 'mount');
    }
  }
  for (const key of Object.keys(out)) out[key] = [...new Set(out[key])].sort();
  return out;
}

beforeAll(async () => {
  await baseRootfs();
  // The CLI places the project's agent bundle (dist/bundle), as an installed kit does.
  for (const entry of bundleEntries()) await bundle(entry);
  bundleForNode(CLI_SOURCE, CLI);
  stateDir = await mkdtemp(join(tmpdir(), 'skp-'));
}, ROOTFS_TIMEOUT_MS);

/** Removes what the state dir's instance has on the host (its sandboxes, network attachments, cgroups, mounts). */
async function removeInstanceTraces(): Promise<void> {
  if (!fs.existsSync(join(stateDir, 'instance'))) return;
  const net = await openSandboxHostNetwork(instance());
  await cleanupLeftovers({ instance: instance(), dataRoot: join(stateDir, 'runtime'), network: net.network });
  await net.close();
}

beforeEach(() => {
  platformLog = '';
});

// Each test starts its own platform on the shared state dir: the one a test leaves running goes with it, and so does
// whatever a failed test left on the host, so the next test starts from nothing.
afterEach(async () => {
  if (child) await killHard();
  if (stateDir && fs.existsSync(join(stateDir, 'instance')) && Object.keys(hostTraces()).length > 0) await removeInstanceTraces();
});

afterAll(async () => {
  if (child) await killHard();
  if (!stateDir) return;
  await removeInstanceTraces();
  await shutDownLeftRedis(stateDir);
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/**
 * The tail of a sandbox's console log, the sockets listening in its network namespace, its runtime state, the
 * processes in its cgroup and the platforms' logs.
 */
function survivorDiagnostics(sandboxID: string): string {
  const log = join(stateDir, 'runtime', instance(), `${sandboxID}.console.log`);
  const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : '(no console log)';
  const ss = spawnSync('ip', ['netns', 'exec', `${instance()}-${sandboxID}`, 'ss', '-Htlnp'], { encoding: 'utf8' });
  const states = ['crun', 'runc'].map((rt) => {
    const r = spawnSync(rt, ['--root', join(DEFAULT_STATE_ROOT, instance(), rt), 'state', sandboxID], { encoding: 'utf8' });
    return `${rt}: ${r.stdout || r.stderr}`;
  });
  // Any hierarchy holds the same processes (v1: one per controller; v2: the one).
  const procsFile = hostCgroupMounts()
    .map((m) => join(m.mountPoint, `sandbox-kit-${instance()}`, sandboxID, 'cgroup.procs'))
    .find((f) => fs.existsSync(f));
  const commandOf = (pid: string) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      return '(gone)';
    }
  };
  const procs = procsFile ? fs.readFileSync(procsFile, 'utf8').split('\n').filter(Boolean) : [];
  return [
    `console log: ${tail}`,
    `listening: ${ss.stdout || ss.stderr}`,
    `runtime state: ${states.join('\n')}`,
    `processes in its cgroup: ${procs.map((pid) => `${pid} ${commandOf(pid)}`).join('\n') || '(none)'}`,
    `platform log: ${platformLog.slice(-6000)}`,
  ].join('\n');
}

/** Waits until `probe` sees the new sandbox reach a stage, polling fast (a create takes a few hundred ms). */
async function until(probe: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('the create never reached the stage to kill at');
    await new Promise((r) => setTimeout(r, 2));
  }
}

test('killed with SIGKILL during a create, restarted: nothing lost, nothing leaked', async () => {
  let platform = await startCli();
  const created = await api(platform, 'POST', '/v2/sandboxes', { templateID: 'base', metadata: { survivor: 'yes' } });
  expect(created.status).toBe(201);
  const survivor = (await created.json()) as { sandboxID: string; envdAccessToken: string };

  const stages: Array<[string, (traces: Record<string, string[]>) => boolean]> = [
    ['its network namespace exists', (t) => Object.entries(t).some(([id, w]) => id !== survivor.sandboxID && w.includes('netns'))],
    ['its container exists', (t) => Object.entries(t).some(([id, w]) => id !== survivor.sandboxID && w.some((x) => x.endsWith('state')))],
  ];
  for (const [stage, reached] of stages) {
    const pending = api(platform, 'POST', '/v2/sandboxes', { templateID: 'base' }).catch(() => undefined);
    await until(() => reached(hostTraces(false)));
    await killHard();
    await pending;
    process.stderr.write(`killed the platform when ${stage}: ${JSON.stringify(hostTraces(false))}\n`);

    platform = await startCli();
    const listed = (await (await api(platform, 'GET', '/v2/sandboxes')).json()) as Array<{ sandboxID: string; state: string }>;
    expect(listed.map((s) => [s.sandboxID, s.state])).toEqual([[survivor.sandboxID, 'running']]);
    // The host holds exactly the listed sandbox, whole.
    const traces = hostTraces();
    expect(Object.keys(traces)).toEqual([survivor.sandboxID]);
    expect(traces[survivor.sandboxID]).toEqual(
      expect.arrayContaining(['dir', 'netns', expect.stringMatching(/^(crun|runc) state$/), expect.stringMatching(/^cgroup /)]),
    );
    // The survivor still answers through the restarted platform's gateway, with the token it had.
    const detail = (await (await api(platform, 'GET', `/sandboxes/${survivor.sandboxID}`)).json()) as {
      envdAccessToken: string;
      metadata: unknown;
    };
    expect(detail).toMatchObject({ envdAccessToken: survivor.envdAccessToken, metadata: { survivor: 'yes' } });
    const listDir = await fetch(`${platform.sandboxUrl}/filesystem.Filesystem/ListDir`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        'E2b-Sandbox-Id': survivor.sandboxID,
        'X-Access-Token': survivor.envdAccessToken,
      },
      body: '{"path":"/home/user"}',
    });
    // On failure the message carries what the survivor's agent printed and what listens in its namespace.
    const failure = listDir.status === 200 ? '' : `${await listDir.text()}\n${survivorDiagnostics(survivor.sandboxID)}`;
    expect({ status: listDir.status, body: failure }).toEqual({ status: 200, body: '' });
  }

  expect((await api(platform, 'DELETE', `/sandboxes/${survivor.sandboxID}`)).status).toBe(204);
  expect(hostTraces()).toEqual({});
});

test('killed with SIGKILL with a full warm pool, restarted: nothing of the pool is left on the host', async () => {
  if (child) await killHard();
  // Run alone, this is the state dir's first platform: nothing of it on the host yet.
  const before = fs.existsSync(join(stateDir, 'instance')) ? hostTraces() : {};
  let log = '';
  await startCli(['--warm-pool', 'base=2'], (text) => {
    log += text;
  });
  await until(() => /warm pool base: sandbox \S+ ready \(2 of 2\)/.test(log), 120_000);
  const pooled = Object.keys(hostTraces(false)).filter((id) => !(id in before));
  expect(pooled).toHaveLength(2);
  await killHard();
  // Started again without a pool: the pool's sandboxes are leftovers no record knows, and go.
  const platform = await startCli();
  expect(hostTraces()).toEqual(before);
  const listed = (await (await api(platform, 'GET', '/v2/sandboxes')).json()) as unknown[];
  expect(listed).toEqual([]);
});

test('a sandbox paused to disk survives SIGKILL of the platform: after a restart connect starts it with its files and token', async () => {
  let platform = await startCli();
  const sdk = await SdkDriver.start();
  try {
    const opts = { apiKey: platform.key, apiUrl: platform.url, sandboxUrl: platform.sandboxUrl };
    const s = await sdk.create('base', { ...opts, envs: { KEPT: 'env' } });
    await sdk.call(s.sandboxId, 'files.write', '/home/user/kept.txt', 'survives the crash');
    const before = (await (await api(platform, 'GET', `/sandboxes/${s.sandboxId}`)).json()) as { envdAccessToken: string };
    expect(await sdk.call(s.sandboxId, 'pause', { keepMemory: false })).toBe(true);
    // Only its files are left (its directory, its disk's image, its console log): no container state, cgroup or
    // network namespace.
    expect(hostTraces()[s.sandboxId]).toEqual(['console', 'dir', 'disk']);

    await killHard();
    platform = await startCli();
    const again = { apiKey: platform.key, apiUrl: platform.url, sandboxUrl: platform.sandboxUrl };
    expect(await sdk.static('getInfo', s.sandboxId, again)).toMatchObject({ state: 'paused' });
    await sdk.connect(s.sandboxId, again);
    const after = (await (await api(platform, 'GET', `/sandboxes/${s.sandboxId}`)).json()) as { envdAccessToken: string; state: string };
    expect(after).toMatchObject({ state: 'running', envdAccessToken: before.envdAccessToken });
    expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/kept.txt')).toBe('survives the crash');
    expect((await sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'echo $KEPT')).stdout).toBe('env\n');
    expect((await api(platform, 'DELETE', `/sandboxes/${s.sandboxId}`)).status).toBe(204);
    expect(hostTraces()).toEqual({});
  } finally {
    await sdk.close();
  }
});
