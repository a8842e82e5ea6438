/**
 * The platform on the real runtime (crun or runc, whichever this host's cgroups call for), with the agent in every
 * sandbox and the real gateway in front, driven by the unmodified E2B SDK. Root only; puts one link into the root
 * network namespace (the standalone sandbox network) on a /24 of its own, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { startPlatformAndGateway, sandboxTraces } from './helpers/platform-and-gateway';

jest.setTimeout(180_000);

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skp-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent));
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const traces = (sandboxID: string): string[] => sandboxTraces(platform, stateDir, sandboxID);

/** One ListDir through the gateway, as the SDK sends it (E2B's routing headers), without the SDK. */
async function listDirStatus(sandboxID: string, token: string): Promise<number> {
  const res = await fetch(`${opts.sandboxUrl}/filesystem.Filesystem/ListDir`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'connect-protocol-version': '1',
      'E2b-Sandbox-Id': sandboxID,
      'E2b-Sandbox-Port': '49983',
      'X-Access-Token': token,
    },
    body: JSON.stringify({ path: '/', depth: 1 }),
    signal: AbortSignal.timeout(20_000),
  });
  await res.body?.cancel();
  return res.status;
}

test('create from base, list, getInfo, ListDir and commands through the gateway, pause, connect, setTimeout, kill', async () => {
  const a = await sdk.create('base', { ...opts, metadata: { suite: 'real' }, envs: { GREETING: 'hello' } });
  const b = await sdk.create('base', { ...opts, metadata: { suite: 'real' } });
  const token = (
    (await (await fetch(`${opts.apiUrl}/sandboxes/${a.sandboxId}`, { headers: { 'x-api-key': opts.apiKey } })).json()) as {
      envdAccessToken: string;
    }
  ).envdAccessToken;

  const pages = await sdk.list({ ...opts, limit: 1, query: { metadata: { suite: 'real' } } }, 3);
  expect(pages.map((p) => p.items.length)).toEqual([1, 1]);
  expect(pages[0].hasNext).toBe(true);
  expect(new Set(pages.map((p) => p.items[0].sandboxId))).toEqual(new Set([a.sandboxId, b.sandboxId]));
  expect(await sdk.call(a.sandboxId, 'getInfo')).toMatchObject({
    sandboxId: a.sandboxId,
    templateId: 'base',
    state: 'running',
    metadata: { suite: 'real' },
  });

  const entries = await sdk.call<Array<{ name: string; type: string }>>(a.sandboxId, 'files.list', '/');
  expect(entries.map((e) => e.name)).toEqual(expect.arrayContaining(['bin', 'etc', 'home', 'usr']));
  const uname = await sdk.call<{ stdout: string; exitCode: number }>(a.sandboxId, 'commands.run', 'uname -a');
  expect(uname.exitCode).toBe(0);
  expect(uname.stdout).toMatch(/^Linux /);
  const env = await sdk.call<{ stdout: string }>(a.sandboxId, 'commands.run', 'echo "$GREETING from $(whoami) in $PWD"');
  expect(env.stdout.trim()).toBe('hello from user in /home/user');
  await expect(sdk.call(a.sandboxId, 'commands.run', 'echo bye; exit 3')).rejects.toMatchObject({
    sdkName: 'CommandExitError',
    detail: { exitCode: 3, stdout: 'bye\n' },
  });

  // Paused: the gateway answers for the frozen sandbox; connect resumes it and the same token works.
  expect(await sdk.call(a.sandboxId, 'pause')).toBe(true);
  expect(await sdk.call(a.sandboxId, 'pause')).toBe(false);
  expect(await listDirStatus(a.sandboxId, token)).toBe(502);
  await sdk.connect(a.sandboxId, opts);
  expect(await listDirStatus(a.sandboxId, token)).toBe(200);
  expect((await sdk.call<{ stdout: string }>(a.sandboxId, 'commands.run', 'echo $GREETING')).stdout).toBe('hello\n');

  await sdk.call(a.sandboxId, 'setTimeout', 60_000);
  const info = await sdk.call<{ endAt: string }>(a.sandboxId, 'getInfo');
  expect(Date.parse(info.endAt) - Date.now()).toBeLessThanOrEqual(60_000);

  for (const s of [a, b]) {
    expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
    await expect(sdk.call(s.sandboxId, 'getInfo')).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
    expect(await sdk.static('kill', s.sandboxId, opts)).toBe(false);
    expect(traces(s.sandboxId)).toEqual([]);
  }
});

test('a sandbox created with autoResume is resumed by its first request through the gateway', async () => {
  const s = await sdk.create('base', { ...opts, lifecycle: { onTimeout: 'pause', autoResume: true } });
  expect(await sdk.call(s.sandboxId, 'pause')).toBe(true);
  expect(await platform.catalog.get(s.sandboxId)).toMatchObject({ state: 'paused', autoResume: true });
  const entries = await sdk.call<Array<{ name: string }>>(s.sandboxId, 'files.list', '/home');
  expect(entries.map((e) => e.name)).toEqual(['user']);
  expect((await sdk.call<{ state: string }>(s.sandboxId, 'getInfo')).state).toBe('running');
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test('a process over the memory limit is killed; the sandbox and the host live on', async () => {
  const s = await sdk.create('base', opts);
  const info = await sdk.call<{ memoryMB: number }>(s.sandboxId, 'getInfo');
  // Holds twice the sandbox's memory in one process (tail buffers a line that never ends).
  const hog = await sdk
    .call<{ exitCode: number }>(s.sandboxId, 'commands.run', `head -c ${info.memoryMB * 2}M /dev/zero | tail > /dev/null`, {
      timeoutMs: 120_000,
    })
    .catch((err: { detail: { exitCode?: number } }) => ({ exitCode: err.detail.exitCode }));
  expect(hog.exitCode).not.toBe(0);
  const after = await sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'echo alive');
  expect(after.stdout).toBe('alive\n');
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
});

test('a wrong API key and an unknown template are refused; nothing is left of either', async () => {
  await expect(sdk.create('base', { ...opts, apiKey: 'sk_wrong_key_000' })).rejects.toMatchObject({ sdkName: 'AuthenticationError' });
  await expect(sdk.create('no-such-template', opts)).rejects.toThrow('template "no-such-template" not found');
  expect((await sdk.list(opts))[0].items).toEqual([]);
  expect(await platform.sandboxes.all()).toEqual([]);
});
