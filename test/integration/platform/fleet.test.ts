/**
 * A fleet of two sandbox hosts on one machine: two platforms on the real runtime, each with its own state and its own
 * sandbox network, sharing one Redis for the catalog and the host registry, and one gateway reading that catalog.
 * The unmodified E2B SDK talks to either host's API, as a load balancer would send it: creates go to the least-loaded
 * host, every call about a sandbox reaches the host that holds it, a list shows the whole fleet, and a host that
 * leaves gets no more sandboxes. Root only; a /24 of its own per host, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { RedisCatalog } from '../../../src/catalog/redis';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { HOSTS_KEY } from '../../../src/platform/fleet/registry';
import { startPlatformOnHost, type PlatformOnHost } from '../../../src/platform/on-host';
import { freePort } from '../../helpers/free-port';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';

jest.setTimeout(240_000);

const KEY = `e2b_${'5'.repeat(40)}`;
let dir: string;
let shared: ThrowawayRedis;
let catalog: RedisCatalog;
const hosts: Record<string, PlatformOnHost> = {};
let gateway: RunningGateway;
let sdk: SdkDriver;

async function startHost(hostID: string): Promise<PlatformOnHost> {
  const port = await freePort();
  const stateDir = join(dir, hostID);
  const platform = await startPlatformOnHost({
    stateDir,
    port,
    apiKeyFile: join(dir, 'api-key'),
    catalog: `${shared.url}/0`,
    agent: await freshAgentPayload(join(stateDir, 'bundle')),
    fleet: { hostID, apiUrl: `http://127.0.0.1:${port}`, redisUrl: `${shared.url}/0` },
    log: (line) => process.stderr.write(`${hostID}: ${line}\n`),
  });
  hosts[hostID] = platform;
  return platform;
}

const opts = (host: string) => ({ apiKey: KEY, apiUrl: hosts[host]!.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` });

/** Which host holds the sandbox, by the hosts' own stores (not the catalog the routing reads). */
async function holder(sandboxID: string): Promise<string[]> {
  const found: string[] = [];
  for (const [id, platform] of Object.entries(hosts)) {
    if ((await platform.sandboxes.all()).some((r) => r.sandboxID === sandboxID)) found.push(id);
  }
  return found;
}

const api = (host: string, method: string, path: string, body?: unknown) =>
  fetch(`${hosts[host]!.url}${path}`, {
    method,
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  await baseRootfs();
  dir = await mkdtemp(join(tmpdir(), 'skp-fleet-'));
  fs.writeFileSync(join(dir, 'api-key'), `${KEY}\n`, { mode: 0o600 });
  shared = await startRedis();
  await startHost('host-a');
  await startHost('host-b');
  catalog = await RedisCatalog.open(`${shared.url}/0`);
  gateway = await startGateway({ catalog });
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await catalog?.close();
  for (const platform of Object.values(hosts)) await platform.close({ killSandboxes: true });
  await shared?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('creates spread over the hosts; every call reaches the holder, through either API; a list is the fleet', async () => {
  // Both empty: the tie goes to the smaller host ID, whichever API is asked; then to the emptier host.
  const first = await sdk.create('base', { ...opts('host-b'), metadata: { fleet: 'yes' } });
  expect(await holder(first.sandboxId)).toEqual(['host-a']);
  const second = await sdk.create('base', { ...opts('host-a'), metadata: { fleet: 'yes' } });
  expect(await holder(second.sandboxId)).toEqual(['host-b']);
  expect((await catalog.get(first.sandboxId))?.hostID).toBe('host-a');
  expect((await catalog.get(second.sandboxId))?.hostID).toBe('host-b');

  // The SDK through host-b's API and the shared gateway, for the sandbox host-a holds.
  const ran = await sdk.call<{ stdout: string; exitCode: number }>(first.sandboxId, 'commands.run', 'echo "$(hostname) ok"');
  expect(ran).toMatchObject({ exitCode: 0, stdout: `${first.sandboxId} ok\n` });
  for (const host of ['host-a', 'host-b']) {
    const info = (await (await api(host, 'GET', `/sandboxes/${second.sandboxId}`)).json()) as { sandboxID: string; metadata: unknown };
    expect(info).toMatchObject({ sandboxID: second.sandboxId, metadata: { fleet: 'yes' } });
  }
  expect((await api('host-a', 'POST', `/sandboxes/${second.sandboxId}/timeout`, { timeout: 600 })).status).toBe(204);

  // One list, in start order, paged across the hosts.
  const pages = await sdk.list({ ...opts('host-a'), limit: 1, query: { metadata: { fleet: 'yes' } } }, 3);
  expect(pages.map((p) => p.items.map((s) => s.sandboxId))).toEqual([[second.sandboxId], [first.sandboxId]]);
  expect(pages.map((p) => p.hasNext)).toEqual([true, false]);

  // A kill through the other host's API removes it where it is.
  expect((await api('host-b', 'DELETE', `/sandboxes/${first.sandboxId}`)).status).toBe(204);
  expect(await holder(first.sandboxId)).toEqual([]);
  expect((await api('host-b', 'GET', `/sandboxes/${first.sandboxId}`)).status).toBe(404);
  await sdk.static('kill', second.sandboxId, opts('host-a'));
  expect(await holder(second.sandboxId)).toEqual([]);
});

test("teams are the fleet's: a key made on one host works on the other, is refused there within a second of its revocation, and a quota holds across both hosts", async () => {
  const admin = (host: string, method: string, path: string, body?: unknown) => api(host, method, path, body).then((r) => r.json());
  await admin('host-a', 'POST', '/admin/teams', { name: 'fleet-team', quotas: { sandboxes: 1 } });
  await admin('host-a', 'POST', '/admin/teams', { name: 'other-team' });
  const made = (await admin('host-a', 'POST', '/admin/keys', { team: 'fleet-team', name: 'ci' })) as { key: string; keyID: string };
  const other = (await admin('host-b', 'POST', '/admin/keys', { team: 'other-team', name: 'ci' })) as { key: string };
  const as = (key: string, host: string) => ({ ...opts(host), apiKey: key });

  // One create through each host at once against a quota of 1: exactly one sandbox, wherever it landed.
  const results = await Promise.allSettled([sdk.create('base', as(made.key, 'host-a')), sdk.create('base', as(made.key, 'host-b'))]);
  const passed = results.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ sandboxId: string }>[];
  expect(passed).toHaveLength(1);
  expect(((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as Error).message).toMatch(/^RateLimitError/);
  const id = passed[0]!.value.sandboxId;

  // Another team, through either host, does not see it.
  for (const host of ['host-a', 'host-b']) {
    const res = await fetch(`${hosts[host]!.url}/sandboxes/${id}`, { headers: { 'x-api-key': other.key } });
    expect(res.status).toBe(404);
  }
  expect(await sdk.static('kill', id, as(other.key, 'host-a'))).toBe(false);

  const listB = (key: string) => fetch(`${hosts['host-b']!.url}/v2/sandboxes`, { headers: { 'x-api-key': key } });
  expect((await listB(made.key)).status).toBe(200);
  expect((await api('host-a', 'DELETE', `/admin/keys/${made.keyID}`)).status).toBe(204);
  const revokedAt = Date.now();
  let status = 0;
  while (Date.now() - revokedAt < 1000 && status !== 401) status = (await listB(made.key)).status;
  expect(status).toBe(401);
  expect(await sdk.static('kill', id, opts('host-b'))).toBe(true);
});

test('a host that leaves gets no more sandboxes; an unknown template is answered as a single host would', async () => {
  await hosts['host-a']!.close({ killSandboxes: true });
  delete hosts['host-a'];
  const redis = new Redis(`${shared.url}/0`);
  try {
    expect(await redis.hkeys(HOSTS_KEY)).toEqual(['host-b']);
  } finally {
    redis.disconnect();
  }
  const made = await sdk.create('base', opts('host-b'));
  expect(await holder(made.sandboxId)).toEqual(['host-b']);
  const missing = await api('host-b', 'POST', '/v2/sandboxes', { templateID: 'no-such-template' });
  expect(missing.status).toBe(404);
  expect(await missing.text()).toContain('no-such-template');
  await sdk.static('kill', made.sandboxId, opts('host-b'));
});
