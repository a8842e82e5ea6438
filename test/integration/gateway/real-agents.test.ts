import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { userInfo, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway } from '../../../src/gateway';
import { CachedCatalog, RedisCatalog } from '../../../src/catalog';
import { startRedis } from '../../helpers/redis';
import { call, Cleanup, eventually, spawnAgent, spawnGateway, type CliAgent } from './helpers/common';

const cleanup = new Cleanup();
let dir: string;
let admin: RedisCatalog;
let gateways: number[];
const agents: Record<string, { agent: CliAgent; token: string }> = {};
const user = userInfo().username;

const connectHeaders = (id: string, token: string, extra: Record<string, string> = {}) => ({
  'Svc-Sandbox-Id': id,
  'X-Access-Token': token,
  'Content-Type': 'application/json',
  'Connect-Protocol-Version': '1',
  ...extra,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sk-gw-agents-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'tree', 'sub'), { recursive: true });
  await writeFile(join(dir, 'tree', 'a.txt'), 'hello');
  await writeFile(join(dir, 'tree', 'sub', 'b.txt'), 'world!');

  const redis = await startRedis();
  cleanup.add(() => redis.stop());
  admin = await RedisCatalog.open(redis.url);
  cleanup.add(() => admin.close());

  for (const id of ['alpha', 'beta']) {
    const token = `token-of-${id}`;
    const tokenFile = join(dir, `${id}.token`);
    await writeFile(tokenFile, token, { mode: 0o600 });
    const agent = await spawnAgent(tokenFile, user);
    cleanup.add(() => agent.stop());
    agents[id] = { agent, token };
    await admin.upsert({ sandboxID: id, host: '127.0.0.1', agentPort: agent.port, token });
  }

  // Two gateways on one Redis: one in this process, one run by the CLI.
  const catalog = new CachedCatalog(await RedisCatalog.open(redis.url), 60_000);
  cleanup.add(() => catalog.close());
  const inProcess = await startGateway({ catalog });
  cleanup.add(() => inProcess.close(100));
  const cli = await spawnGateway(['--catalog', redis.url]);
  cleanup.add(() => cli.stop());
  gateways = [inProcess.port, cli.port];
});
afterAll(() => cleanup.run());

describe('real agents behind two gateways on one Redis', () => {
  it('serves Stat from each sandbox through each gateway', async () => {
    for (const port of gateways) {
      for (const id of ['alpha', 'beta']) {
        const reply = await call(port, {
          path: '/filesystem.Filesystem/Stat',
          headers: connectHeaders(id, agents[id].token),
          body: JSON.stringify({ path: join(dir, 'tree', 'a.txt') }),
        });
        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.body).entry).toMatchObject({ name: 'a.txt', path: join(dir, 'tree', 'a.txt'), size: 5 });
      }
    }
  });

  it('serves ListDir through the gateway', async () => {
    const reply = await call(gateways[1], {
      path: '/filesystem.Filesystem/ListDir',
      headers: connectHeaders('alpha', agents.alpha.token),
      body: JSON.stringify({ path: join(dir, 'tree'), depth: 2 }),
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).entries.map((e: { name: string }) => e.name)).toEqual(['a.txt', 'sub', 'b.txt']);
  });

  it("passes the agent's own errors through unchanged", async () => {
    const reply = await call(gateways[0], {
      path: '/filesystem.Filesystem/Stat',
      headers: connectHeaders('alpha', agents.alpha.token),
      body: JSON.stringify({ path: join(dir, 'missing') }),
    });
    expect(reply.status).toBe(404);
    expect(JSON.parse(reply.body).code).toBe('not_found');
  });

  it("refuses another sandbox's token at the gateway, before the agent", async () => {
    for (const port of gateways) {
      const reply = await call(port, {
        path: '/filesystem.Filesystem/Stat',
        headers: connectHeaders('alpha', agents.beta.token),
        body: JSON.stringify({ path: '/' }),
      });
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'alpha', message: expect.stringContaining('X-Access-Token'), code: 401 });
    }
  });

  it('answers 502 naming the port once an agent is gone, and 502 not found once its sandbox is removed', async () => {
    const { agent, token } = agents.beta;
    await agent.stop('SIGKILL');
    for (const port of gateways) {
      const reply = await call(port, { path: '/filesystem.Filesystem/Stat', headers: connectHeaders('beta', token), body: '{"path":"/"}' });
      expect(reply.status).toBe(502);
      expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'beta', message: expect.any(String), port: agent.port, code: 502 });
    }
    await admin.remove('beta');
    await eventually(async () => {
      for (const port of gateways) {
        const reply = await call(port, {
          path: '/filesystem.Filesystem/Stat',
          headers: connectHeaders('beta', token),
          body: '{"path":"/"}',
        });
        expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'beta', message: expect.stringContaining('not found'), code: 502 });
      }
    });
    // The other sandbox is untouched.
    const alive = await call(gateways[1], {
      path: '/filesystem.Filesystem/Stat',
      headers: connectHeaders('alpha', agents.alpha.token),
      body: '{"path":"/"}',
    });
    expect(alive.status).toBe(200);
  });
});
