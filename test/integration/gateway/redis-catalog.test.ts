import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { testCertificates } from '../../helpers/tls-domain';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { CachedCatalog, RedisCatalog } from '../../../src/catalog';
import { hashAccessToken } from '../../../src/contract';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';
import {
  call,
  Cleanup,
  closedPort,
  eventually,
  openStream,
  spawnGateway,
  startUpstream,
  type Reply,
  type Upstream,
} from './helpers/common';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Ten minutes: far longer than any test, so only pub/sub invalidation can make a change visible. */
const LONG_TTL_MS = 600_000;

interface Fleet {
  redis: ThrowawayRedis;
  admin: RedisCatalog;
  /** One gateway in this process, one the CLI runs: both on the same Redis. */
  ports: number[];
}

async function fleet(): Promise<Fleet> {
  const redis = await startRedis();
  cleanup.add(() => redis.stop());
  const admin = await RedisCatalog.open(redis.url);
  cleanup.add(() => admin.close());
  const catalog = new CachedCatalog(await RedisCatalog.open(redis.url), LONG_TTL_MS);
  cleanup.add(() => catalog.close());
  const inProcess: RunningGateway = await startGateway({ catalog });
  cleanup.add(() => inProcess.close(100));
  const cli = await spawnGateway(['--catalog', redis.url, '--catalog-cache-ms', String(LONG_TTL_MS)]);
  cleanup.add(() => cli.stop());
  return { redis, admin, ports: [inProcess.port, cli.port] };
}

async function upstreamNamed(name: string): Promise<Upstream> {
  const upstream = await startUpstream((_req, res) => res.end(name));
  cleanup.add(() => upstream.close());
  return upstream;
}

const askAll = (ports: number[], id: string, token: string): Promise<Reply[]> =>
  Promise.all(ports.map((port) => call(port, { headers: { 'Svc-Sandbox-Id': id, 'X-Access-Token': token } })));

describe('Redis catalog shared by two gateways', () => {
  it('makes upserts, pauses, token changes and removals visible to every gateway at once, despite a long cache', async () => {
    const { admin, ports } = await fleet();
    const agent = await upstreamNamed('agent');
    const moved = await upstreamNamed('moved');

    // Both gateways look up (and cache) the miss first.
    for (const reply of await askAll(ports, 'sb1', 'tok')) expect(reply.status).toBe(502);

    await admin.upsert({ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: 'tok' });
    await eventually(async () => expect((await askAll(ports, 'sb1', 'tok')).map((r) => r.body)).toEqual(['agent', 'agent']));

    expect(await admin.setState('sb1', 'paused')).toBe(true);
    await eventually(async () => expect((await askAll(ports, 'sb1', 'tok')).map((r) => r.status)).toEqual([502, 502]));
    for (const reply of await askAll(ports, 'sb1', 'tok')) expect(JSON.parse(reply.body).message).toContain('paused');

    await admin.setState('sb1', 'running');
    await eventually(async () => expect((await askAll(ports, 'sb1', 'tok')).map((r) => r.status)).toEqual([200, 200]));

    await admin.upsert({ sandboxID: 'sb1', host: '127.0.0.1', agentPort: moved.port, token: 'new-tok' });
    await eventually(async () => expect((await askAll(ports, 'sb1', 'new-tok')).map((r) => r.body)).toEqual(['moved', 'moved']));
    expect((await askAll(ports, 'sb1', 'tok')).map((r) => r.status)).toEqual([401, 401]);

    expect(await admin.remove('sb1')).toBe(true);
    await eventually(async () => expect((await askAll(ports, 'sb1', 'new-tok')).map((r) => r.status)).toEqual([502, 502]));
    for (const reply of await askAll(ports, 'sb1', 'new-tok')) {
      expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('not found'), code: 502 });
    }
    expect(await admin.remove('sb1')).toBe(false);
    expect(await admin.setState('sb1', 'running')).toBe(false);
  });

  it('lets a request in flight finish when its sandbox is removed, while new requests get 502 on both gateways', async () => {
    const { admin, ports } = await fleet();
    let finish!: () => void;
    const agent = await startUpstream((_req, res) => {
      res.writeHead(200);
      res.write('begun,');
      finish = () => res.end('done');
    });
    cleanup.add(() => agent.close());
    await admin.upsert({ sandboxID: 'sb2', host: '127.0.0.1', agentPort: agent.port, token: 'tok' });
    const res = await openStream(ports[1], { headers: { 'Svc-Sandbox-Id': 'sb2', 'X-Access-Token': 'tok' } });
    let body = '';
    res.on('data', (c: Buffer) => (body += c.toString()));
    const ended = new Promise<boolean>((resolve) => res.on('close', () => resolve(res.complete)));
    await eventually(async () => expect(finish).toBeDefined());

    await admin.remove('sb2');
    await eventually(async () => expect((await askAll(ports, 'sb2', 'tok')).map((r) => r.status)).toEqual([502, 502]));
    finish();
    expect(await ended).toBe(true);
    expect(body).toBe('begun,done');
  });

  it("carries a sandbox's HTTPS ports and request host mask to both gateways: TLS with a certificate they do not trust, the mask as Host", async () => {
    const { admin, ports } = await fleet();
    const certs = await testCertificates('nt5.test');
    cleanup.add(() => certs.close());
    // The sandbox's own HTTPS server: a certificate from a CA the gateways were never given.
    const server = createHttpsServer({ key: certs.key, cert: certs.cert }, (req, res) =>
      res.end(JSON.stringify({ tls: (req.socket as { encrypted?: boolean }).encrypted === true, host: req.headers.host })),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const plain = await upstreamNamed('plain');
    const mask = ['localhost:$', '{PORT}'].join('');
    await admin.upsert({ sandboxID: 'sb5', host: '127.0.0.1', token: 'tok', httpsPorts: [port], maskRequestHost: mask });
    const ask = (p: number) =>
      Promise.all(ports.map((gw) => call(gw, { method: 'GET', headers: { 'Svc-Sandbox-Id': 'sb5', 'Svc-Sandbox-Port': String(p) } })));
    const secure = await eventually(async () => {
      const replies = await ask(port);
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      return replies;
    });
    for (const r of secure) expect(JSON.parse(r.body)).toEqual({ tls: true, host: `localhost:${port}` });
    // A port it does not list stays plain HTTP.
    expect((await ask(plain.port)).map((r) => r.body)).toEqual(['plain', 'plain']);
    // Without the list, the same server is spoken to in plain HTTP: no answer.
    await admin.upsert({ sandboxID: 'sb5', host: '127.0.0.1', token: 'tok' });
    await eventually(async () => expect((await ask(port)).map((r) => r.status)).toEqual([502, 502]));
  });

  it('stores one hash per sandbox with the token hashed, and announces changes on the documented channel', async () => {
    const redis = await startRedis();
    cleanup.add(() => redis.stop());
    const admin = await RedisCatalog.open(redis.url);
    cleanup.add(() => admin.close());
    const raw = new Redis(redis.url);
    const listener = new Redis(redis.url);
    cleanup.add(() => raw.disconnect());
    cleanup.add(() => listener.disconnect());
    const announced: string[] = [];
    await listener.subscribe('sandbox-kit:catalog-changes');
    listener.on('message', (_channel: string, id: string) => announced.push(id));

    await admin.upsert({ sandboxID: 'sb3', host: '10.11.0.7', token: 'secret-token', autoResume: true });
    expect(await raw.hgetall('sandbox-kit:sandbox:sb3')).toEqual({
      host: '10.11.0.7',
      agentPort: '49983',
      tokenHash: hashAccessToken('secret-token'),
      state: 'running',
      autoResume: 'true',
    });
    await admin.setState('sb3', 'paused');
    expect(await raw.hget('sandbox-kit:sandbox:sb3', 'state')).toBe('paused');
    await eventually(async () => expect(announced).toEqual(['sb3', 'sb3']));

    // An entry written by hand with a bad field is an error for that lookup, not a crash.
    await raw.hset('sandbox-kit:sandbox:broken', { host: '10.0.0.1', agentPort: 'x', tokenHash: 'nope', state: 'running' });
    await expect(admin.get('broken')).rejects.toThrow('sandbox-kit:sandbox:broken is malformed');
  });

  it('answers 503 JSON while Redis is down and keeps running', async () => {
    const redis = await startRedis();
    cleanup.add(() => redis.stop());
    const catalog = new CachedCatalog(await RedisCatalog.open(redis.url, { commandTimeoutMs: 500 }), LONG_TTL_MS);
    cleanup.add(() => catalog.close());
    const gateway = await startGateway({ catalog });
    cleanup.add(() => gateway.close(100));
    await redis.stop();
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb4', 'X-Access-Token': 'tok' } });
    expect(reply.status).toBe(503);
    expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'sb4', message: expect.stringContaining('catalog is unavailable'), code: 503 });
    const again = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb4', 'X-Access-Token': 'tok' } });
    expect(again.status).toBe(503);
  });

  it('refuses to start when Redis cannot be reached, saying where it looked', async () => {
    const port = await closedPort();
    await expect(spawnGateway(['--catalog', `redis://127.0.0.1:${port}`])).rejects.toThrow(
      `cannot reach the Redis catalog at redis://127.0.0.1:${port}`,
    );
  });
});
