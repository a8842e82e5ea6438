/**
 * The secret API driven by the unmodified E2B SDK (`Secret.create/list/getInfo/update/exists/destroy`) against a
 * platform over the stand-in host (no root): versions, lower-cased names, lookups by ID and by name, paging, clear
 * 400s, 404s and 409s; another team sees none of it; the value is in no answer, no error, and not in Redis in the
 * clear, and the key it is sealed with is the owner's only.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPlatform, type RunningPlatform } from '../../../src/platform';
import { freePort } from '../../helpers/free-port';
import { FakeHost } from './helpers/fake-host';
import { type SdkCallError, SdkDriver } from './helpers/sdk-driver';

jest.setTimeout(60_000);

let dir: string;
let host: FakeHost;
let platform: RunningPlatform;
let sdk: SdkDriver;
let beta: string;

const VALUE = `sk-live-${Math.random().toString(36).slice(2)}-do-not-show`;

async function api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${platform.url}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, text: await res.text() };
}

const opts = (apiKey = platform.apiKey) => ({ apiKey, apiUrl: platform.url });

async function failure(work: Promise<unknown>): Promise<SdkCallError> {
  return work.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err as SdkCallError,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sks-'));
  host = new FakeHost(await freePort());
  platform = await startPlatform({
    stateDir: join(dir, 'platform'),
    runtime: host.runtimeView(),
    network: host.networkView(),
    agentPort: host.agentPort,
    templates: () => ({ routes: [], resolver: { resolve: async () => undefined, names: async () => [] } }),
  });
  await api(platform.apiKey, 'POST', '/admin/teams', { name: 'sec-beta' });
  beta = (JSON.parse((await api(platform.apiKey, 'POST', '/admin/keys', { team: 'sec-beta', name: 'ci' })).text) as { key: string }).key;
  sdk = await SdkDriver.start();
});

afterAll(async () => {
  await sdk?.close();
  await platform?.close({ killSandboxes: true });
  await host?.closeAll();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('create, get by ID and by name, update to version 2, list, exists and destroy, with the unmodified SDK', async () => {
  const created = await sdk.secret<Record<string, unknown>>('create', 'OpenAI-Key', VALUE, { ...opts(), metadata: { team: 'ml' } });
  expect(created).toMatchObject({ name: 'openai-key', version: 1, metadata: { team: 'ml' } });
  const id = created.secretId as string;
  expect(id).toMatch(/^sec_[a-z0-9]{20}$/);
  expect(JSON.stringify(created)).not.toContain(VALUE);

  expect(await sdk.secret('getInfo', id, opts())).toEqual(created);
  // By name, in any case: names are lower-cased.
  expect(await sdk.secret('getInfo', 'OPENAI-KEY', opts())).toEqual(created);
  expect(await sdk.secret('exists', 'openai-key', opts())).toBe(true);
  expect(await sdk.secret('exists', 'nope', opts())).toBe(false);

  const updated = await sdk.secret<Record<string, unknown>>('update', 'openai-key', `${VALUE}-2`, opts());
  expect(updated).toMatchObject({ secretId: id, version: 2, metadata: { team: 'ml' } });
  expect(new Date(updated.updatedAt as string).getTime()).toBeGreaterThanOrEqual(new Date(created.createdAt as string).getTime());
  const replaced = await sdk.secret<Record<string, unknown>>('update', id, `${VALUE}-3`, { ...opts(), metadata: { team: 'ops' } });
  expect(replaced).toMatchObject({ version: 3, metadata: { team: 'ops' } });
  expect(await platform.redis.hget('sandbox-kit:platform:secrets', id).then((t) => t !== null)).toBe(true);

  // The placeholder the SDK formats for it.
  expect(await sdk.secret('fill', 'openai-key')).toBe(['$', '{e2b.secrets.openai-key}'].join(''));

  // A duplicate name (in any case) is a conflict, and nothing changed.
  const dup = await failure(sdk.secret('create', 'OPENAI-key', 'other', opts()));
  expect(dup.message).toMatch(/secret named "openai-key" already/);
  expect(await sdk.secret('getInfo', id, opts())).toMatchObject({ version: 3 });

  expect(await sdk.secret('destroy', id, opts())).toBe(true);
  expect(await sdk.secret('destroy', id, opts())).toBe(false);
  expect((await failure(sdk.secret('getInfo', id, opts()))).sdkName).toBe('SecretNotFoundError');
  expect((await failure(sdk.secret('update', 'openai-key', 'v', opts()))).sdkName).toBe('SecretNotFoundError');
  // Its name is free again.
  const again = await sdk.secret<{ secretId: string; version: number }>('create', 'openai-key', 'v', opts());
  expect(again.version).toBe(1);
  expect(again.secretId).not.toBe(id);
  await sdk.secret('destroy', again.secretId, opts());
});

test('list pages through every secret of the team once, oldest first, with the x-next-token the SDK follows', async () => {
  const names = Array.from({ length: 5 }, (_, i) => `sec-page-${i}`);
  for (const name of names) await sdk.secret('create', name, VALUE, opts());
  const pages = await sdk.secretList({ ...opts(), limit: 2 });
  expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
  expect(pages.map((p) => p.hasNext)).toEqual([true, true, false]);
  expect(pages.flatMap((p) => p.items.map((s) => s.name))).toEqual(names);
  expect(JSON.stringify(pages)).not.toContain(VALUE);
  expect((await api(platform.apiKey, 'GET', '/secrets?nextToken=bogus')).status).toBe(400);
  for (const name of names) await sdk.secret('destroy', name, opts());
});

test("another team cannot list, read, update or destroy a team's secret, by ID or by name, and can use the same name", async () => {
  const mine = await sdk.secret<{ secretId: string }>('create', 'sec-shared-name', VALUE, opts());
  const b = opts(beta);
  expect((await sdk.secretList(b)).flatMap((p) => p.items)).toEqual([]);
  for (const ref of [mine.secretId, 'sec-shared-name']) {
    expect((await failure(sdk.secret('getInfo', ref, b))).sdkName).toBe('SecretNotFoundError');
    expect((await failure(sdk.secret('update', ref, 'stolen', b))).sdkName).toBe('SecretNotFoundError');
    expect(await sdk.secret('exists', ref, b)).toBe(false);
    expect(await sdk.secret('destroy', ref, b)).toBe(false);
  }
  expect(await sdk.secret('getInfo', mine.secretId, opts())).toMatchObject({ version: 1 });
  // Names are per team.
  const theirs = await sdk.secret<{ secretId: string }>('create', 'sec-shared-name', 'theirs', b);
  expect(theirs.secretId).not.toBe(mine.secretId);
  await sdk.secret('destroy', theirs.secretId, b);
  await sdk.secret('destroy', mine.secretId, opts());
});

test('bad names, values and metadata get 400s naming the field; the value is never echoed', async () => {
  const key = platform.apiKey;
  const bad: Array<[unknown, RegExp]> = [
    [{ name: '', value: 'v' }, /body field "name": expected a secret name/],
    [{ name: 'sec_abc', value: 'v' }, /body field "name": .*"sec_"/],
    [{ name: 'a{b}', value: 'v' }, /body field "name"/],
    [{ name: 'ok', value: 42 }, /body field "value": .*given a number/],
    [{ name: 'ok', value: '' }, /body field "value": .*given 0 bytes/],
    [{ name: 'ok', value: `${VALUE}\r\nX-Injected: 1` }, /body field "value": .*control character/],
    [{ name: 'ok', value: 'x'.repeat(16 * 1024 + 1) }, /body field "value": .*16385 bytes/],
    [
      { name: 'ok', value: 'v', metadata: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) },
      /"metadata": 33 entries/,
    ],
    [{ name: 'ok', value: 'v', metadata: { ['k'.repeat(129)]: 'v' } }, /"metadata\.k+": the key is 129 bytes/],
    [{ name: 'ok', value: 'v', metadata: { k: 'v'.repeat(1025) } }, /"metadata\.k": the value is 1025 bytes/],
    [{ name: 'ok', value: 'v', metadata: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'.repeat(1000)])) }, /in all/],
    [{ name: 'ok', value: 'v', metadata: { k: 1 } }, /"metadata\.k": expected an object of strings/],
    [{ name: 'ok', value: 'v', extra: 1 }, /unknown key "extra"/],
  ];
  for (const [body, message] of bad) {
    const res = await api(key, 'POST', '/secrets', body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(message);
    expect(res.text).not.toContain(VALUE);
  }
  expect(await sdk.secretList(opts()).then((p) => p.flatMap((x) => x.items))).toEqual([]);
  // Through the SDK, as the SDK's own error.
  const err = await failure(sdk.secret('create', 'bad name!', VALUE, opts()));
  expect(err.message).toMatch(/expected a secret name/);
  expect(err.message).not.toContain(VALUE);
  expect((await api(key, 'GET', '/secrets/sec_nothere')).status).toBe(404);
  expect((await api(key, 'DELETE', '/secrets/nothere')).status).toBe(404);
});

test('the value is sealed at rest: not in Redis in the clear, and the key file is 0600', async () => {
  const made = await sdk.secret<{ secretId: string }>('create', 'sec-at-rest', VALUE, opts());
  const dump = JSON.stringify(await platform.redis.hgetall('sandbox-kit:platform:secret-values'));
  expect(dump).not.toContain(VALUE);
  expect(dump).not.toContain(Buffer.from(VALUE).toString('base64').slice(0, 16));
  expect(JSON.stringify(await platform.redis.hgetall('sandbox-kit:platform:secrets'))).not.toContain(VALUE);
  expect(fs.statSync(join(dir, 'platform', 'secrets.key')).mode & 0o777).toBe(0o600);
  await sdk.secret('destroy', made.secretId, opts());
});

test("deleting a team deletes its secrets, sealed values included; another team's secret of the same name stays and works", async () => {
  await api(platform.apiKey, 'POST', '/admin/teams', { name: 'sec-gone' });
  const goneKey = (
    JSON.parse((await api(platform.apiKey, 'POST', '/admin/keys', { team: 'sec-gone', name: 'ci' })).text) as { key: string }
  ).key;
  const doomed = await sdk.secret<{ secretId: string }>('create', 'sec-team-cred', VALUE, opts(goneKey));
  const alsoDoomed = await sdk.secret<{ secretId: string }>('create', 'sec-team-other', VALUE, opts(goneKey));
  const kept = await sdk.secret<{ secretId: string }>('create', 'sec-team-cred', 'kept-value', opts(beta));

  expect((await api(platform.apiKey, 'DELETE', '/admin/teams/sec-gone')).status).toBe(204);
  // Nothing of the deleted team's secrets is left: not for the admin by ID, not in Redis (record, sealed value, name).
  for (const id of [doomed.secretId, alsoDoomed.secretId]) {
    expect((await api(platform.apiKey, 'GET', `/secrets/${id}`)).status).toBe(404);
    expect(await platform.redis.hexists('sandbox-kit:platform:secrets', id)).toBe(0);
    expect(await platform.redis.hexists('sandbox-kit:platform:secret-values', id)).toBe(0);
  }
  expect(JSON.stringify(await platform.redis.hgetall('sandbox-kit:platform:secret-names'))).not.toContain(doomed.secretId);
  // Its key is refused; a new team of the same name starts with no secrets.
  expect((await failure(sdk.secretList(opts(goneKey)))).message).toMatch(/401|Unauthorized|API key/i);
  await api(platform.apiKey, 'POST', '/admin/teams', { name: 'sec-gone' });
  const again = (JSON.parse((await api(platform.apiKey, 'POST', '/admin/keys', { team: 'sec-gone', name: 'ci' })).text) as { key: string })
    .key;
  expect((await sdk.secretList(opts(again))).flatMap((p) => p.items)).toEqual([]);
  expect((await api(platform.apiKey, 'DELETE', '/admin/teams/sec-gone')).status).toBe(204);

  // The other team's secret of the same name is untouched.
  expect(await sdk.secret('getInfo', kept.secretId, opts(beta))).toMatchObject({ name: 'sec-team-cred', version: 1 });
  expect(await platform.redis.hexists('sandbox-kit:platform:secret-values', kept.secretId)).toBe(1);
  await sdk.secret('destroy', kept.secretId, opts(beta));
});
