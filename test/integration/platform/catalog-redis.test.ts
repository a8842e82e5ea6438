/**
 * The catalog for a fleet: every state change of a sandbox reaches a RedisCatalog (what gateways on other machines
 * read), and a restarted platform publishes its sandboxes there again. Over the stand-in host, so no root.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisCatalog } from '../../../src/catalog/redis';
import { hashAccessToken } from '../../../src/contract';
import { startPlatform, type RunningPlatform } from '../../../src/platform';
import { startPrivateRedis, type PrivateRedis } from '../../../src/platform/private-redis';
import type { TemplateForSandbox } from '../../../src/platform/sandboxes/template-resolver';
import { freePort } from '../../helpers/free-port';
import { FakeHost } from './helpers/fake-host';

let dir: string;
let catalogRedis: PrivateRedis;
let catalog: RedisCatalog;
let reader: RedisCatalog;
let host: FakeHost;
let platform: RunningPlatform;

const base: TemplateForSandbox = {
  templateID: 'base',
  alias: 'base',
  buildID: 'b',
  // The fake host ignores layers; they must exist, as a create holds them against the storage collector.
  layers: [__dirname],
  memoryMB: 256,
  cpuCount: 1,
  envs: {},
  user: 'user',
};
const start = () =>
  startPlatform({
    stateDir: join(dir, 'platform'),
    runtime: host.runtimeView(),
    network: host.networkView(),
    agentPort: host.agentPort,
    catalog,
    templates: () => ({ routes: [], resolver: { resolve: async (n) => (n === 'base' ? base : undefined), names: async () => ['base'] } }),
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skp-'));
  // A Redis of its own for the catalog, as a fleet's shared one would be.
  catalogRedis = await startPrivateRedis(join(dir, 'catalog'));
  catalog = await RedisCatalog.open(catalogRedis.socketPath, { password: catalogRedis.password });
  reader = await RedisCatalog.open(catalogRedis.socketPath, { password: catalogRedis.password });
  host = new FakeHost(await freePort());
  platform = await start();
});

afterAll(async () => {
  await platform?.close({ killSandboxes: true });
  await host?.closeAll();
  await catalog?.close();
  await reader?.close();
  await catalogRedis?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${platform.url}${path}`, {
    method,
    headers: { 'x-api-key': platform.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test('create, pause, resume and kill reach the Redis catalog; a restart publishes again', async () => {
  const created = (await (
    await api('POST', '/v2/sandboxes', { templateID: 'base', autoResume: { enabled: true }, autoPause: true })
  ).json()) as { sandboxID: string; envdAccessToken: string };
  const id = created.sandboxID;
  expect(await reader.get(id)).toEqual({
    sandboxID: id,
    host: host.sandbox(id).spec.network.address,
    agentPort: host.agentPort,
    tokenHash: hashAccessToken(created.envdAccessToken),
    state: 'running',
    autoResume: true,
  });

  expect((await api('POST', `/sandboxes/${id}/pause`)).status).toBe(204);
  expect((await reader.get(id))?.state).toBe('paused');
  expect((await api('POST', `/v2/sandboxes/${id}/connect`, {})).status).toBe(201);
  expect((await reader.get(id))?.state).toBe('running');

  // A platform that starts again (its memory gone) puts its sandboxes back, even when the catalog lost them.
  await platform.close();
  await catalog.remove(id);
  platform = await start();
  expect((await reader.get(id))?.state).toBe('running');

  expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
  expect(await reader.get(id)).toBeUndefined();
});
