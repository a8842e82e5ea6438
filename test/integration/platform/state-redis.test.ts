/** The platform's state in its private Redis: API key hashes, reuse of a running server, durability of every write. */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { hashApiKey } from '../../../src/platform/teams/api-keys';
import { TeamStore } from '../../../src/platform/teams/store';
import { redisClient, startPrivateRedis, type PrivateRedis } from '../../../src/platform/private-redis';

let dir: string;
let server: PrivateRedis;
let redis: Redis;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skp-'));
  server = await startPrivateRedis(dir);
  redis = redisClient({ socketPath: server.socketPath, password: server.password });
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('keys are stored as hashes only, and the key file replaces its keys at each start', async () => {
  const store = new TeamStore(redis, 'test:');
  await store.syncFileKeys(['sk_first_key_1', 'sk_second_key_2']);
  expect((await store.authenticate('sk_first_key_1'))?.key.teamID).toBe('default');
  expect((await store.authenticate('sk_second_key_2'))?.key.role).toBe('admin');
  expect(Object.keys(await redis.hgetall('test:keys')).sort()).toEqual(
    [hashApiKey('sk_first_key_1'), hashApiKey('sk_second_key_2')].sort(),
  );
  expect(JSON.stringify(await redis.hgetall('test:keys'))).not.toContain('sk_first_key_1');

  // The next start has only the second key in its file: the first stops working at once, on every instance.
  const idBefore = (await store.authenticate('sk_second_key_2'))?.key.keyID;
  await new TeamStore(redis, 'test:').syncFileKeys(['sk_second_key_2']);
  expect(await store.authenticate('sk_first_key_1')).toBeUndefined();
  expect((await store.authenticate('sk_second_key_2'))?.key.keyID).toBe(idBefore);
});

test('a private Redis found running again is used as it is, with its data', async () => {
  await redis.set('test:marker', 'kept');
  const again = await startPrivateRedis(dir);
  expect(again.socketPath).toBe(server.socketPath);
  expect(await redis.get('test:marker')).toBe('kept');
});

test('every acknowledged write survives a SIGKILL of the Redis server itself (append-only, fsync always)', async () => {
  for (let i = 0; i < 50; i++) await redis.hset('test:durable', `k${i}`, String(i));
  const info = String(await redis.call('INFO', 'server'));
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  process.kill(pid, 'SIGKILL');
  while (fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')))
    await new Promise((r) => setTimeout(r, 10));
  server = await startPrivateRedis(dir);
  const fresh = redisClient({ socketPath: server.socketPath, password: server.password });
  try {
    expect(await fresh.hlen('test:durable')).toBe(50);
    expect(await fresh.hget('test:durable', 'k49')).toBe('49');
  } finally {
    fresh.disconnect();
  }
  redis.disconnect();
  redis = redisClient({ socketPath: server.socketPath, password: server.password });
});

test('the private Redis wants its password: a client without it (or with a wrong one) gets nothing; the password is in a 0600 file, not on a command line', async () => {
  for (const password of [undefined, 'not-the-password']) {
    const stranger = new Redis({
      path: server.socketPath,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      password,
    });
    const errors: string[] = [];
    stranger.on('error', (err: Error) => errors.push(err.message));
    const answer = await stranger
      .connect()
      .then(() => stranger.get('test:marker'))
      .then(
        (v) => `read ${v}`,
        (err: Error) => err.message,
      );
    stranger.disconnect();
    expect(answer).not.toMatch(/^read/);
    expect([answer, ...errors].join(' ')).toMatch(/NOAUTH|WRONGPASS|invalid password/i);
  }
  // The platform's own client, with the password, reads and writes as before.
  await redis.set('test:marker', 'kept');
  expect(await redis.get('test:marker')).toBe('kept');
  const file = join(dir, 'redis', 'password');
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readFileSync(file, 'utf8').trim()).toBe(server.password);
  const info = String(await redis.call('INFO', 'server'));
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  expect(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(server.password);
});
