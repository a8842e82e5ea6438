/**
 * The whole local system stopped (`sandbox-kit down`, not killed) and started again (`up`) on the same kept state,
 * with the unmodified E2B SDK configured by the environment `up` prints as the client: a sandbox paused to disk and
 * one paused in memory (moved to disk by the shutdown) come back paused and resume with the same ID, token, env
 * vars and files; a snapshot is still listed and a sandbox starts from it; a volume keeps what a sandbox and the
 * file API wrote, and the resumed sandbox mounts it again. `down --purge` cleans up.
 */
import type { UpJson } from '../../../src/local';
import { SdkDriver } from '../../integration/platform/helpers/sdk-driver';
import { cli, requireBuilt, uniqueLabName } from '../../helpers/lab';

jest.setTimeout(900_000);

const name = uniqueLabName('dup');

async function up(): Promise<{ info: UpJson; sdk: SdkDriver }> {
  const run = await cli(['up', '--name', name, '--gateway-port', '0', '--sandboxes', '1', '--no-templates', '--json'], 600_000);
  if (run.code !== 0) throw new Error(`up failed (${run.code}): ${run.stderr.slice(-3000)}`);
  const info = JSON.parse(run.stdout) as UpJson;
  // What `up` tells a user to export, and nothing else: the SDK finds everything from these.
  const sdk = await SdkDriver.start({
    E2B_API_URL: info.apiUrl as string,
    E2B_VOLUME_API_URL: info.apiUrl as string,
    E2B_SANDBOX_URL: info.sandboxUrl,
    E2B_API_KEY: info.apiKey as string,
  });
  return { info, sdk };
}

/** The platform's view of a sandbox (the SDK does not show its token). */
async function detail(info: UpJson, sandboxID: string): Promise<{ envdAccessToken: string; state: string }> {
  const res = await fetch(`${info.apiUrl}/sandboxes/${sandboxID}`, { headers: { 'x-api-key': info.apiKey as string } });
  if (res.status !== 200) throw new Error(`GET /sandboxes/${sandboxID}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { envdAccessToken: string; state: string };
}

let sdk: SdkDriver | undefined;

beforeAll(() => requireBuilt());

afterAll(async () => {
  await sdk?.close();
  const down = await cli(['down', '--name', name, '--purge'], 120_000);
  expect(down.code).toBe(0);
});

test('down and up: paused sandboxes, a snapshot and a volume come back, and the SDK resumes the sandboxes as they were', async () => {
  let info: UpJson;
  ({ info, sdk } = await up());
  const vol = await sdk.volume<{ volumeId: string }>('create', 'kept-data', {});
  await sdk.volumeCall(vol.volumeId, 'writeFile', '/from-api.txt', 'written through the file API');
  const onDisk = await sdk.create('base', { envs: { KEPT: 'disk' }, volumeMounts: { '/data': 'kept-data' } });
  await sdk.call(onDisk.sandboxId, 'files.write', '/home/user/disk.txt', 'paused to disk');
  await sdk.call(onDisk.sandboxId, 'commands.run', 'echo written inside > /data/from-sandbox.txt');
  const snap = await sdk.call<{ snapshotId: string }>(onDisk.sandboxId, 'createSnapshot', { name: 'kept-snap' });
  const inMemory = await sdk.create('base', { envs: { KEPT: 'memory' } });
  await sdk.call(inMemory.sandboxId, 'files.write', '/home/user/memory.txt', 'paused in memory');
  const tokens = {
    [onDisk.sandboxId]: (await detail(info, onDisk.sandboxId)).envdAccessToken,
    [inMemory.sandboxId]: (await detail(info, inMemory.sandboxId)).envdAccessToken,
  };
  expect(await sdk.call(onDisk.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  expect(await sdk.call(inMemory.sandboxId, 'pause')).toBe(true);
  await sdk.close();
  sdk = undefined;

  const down = await cli(['down', '--name', name], 120_000);
  expect(down.code).toBe(0);
  expect(down.stdout + down.stderr).toMatch(/stopped 1 process \(gateway, platform\)/);

  ({ info, sdk } = await up());
  for (const id of [onDisk.sandboxId, inMemory.sandboxId]) {
    expect(await sdk.static('getInfo', id, {})).toMatchObject({ sandboxId: id, state: 'paused' });
  }
  expect((await sdk.list({ query: { state: ['paused'] } }))[0].items.map((s) => s.sandboxId).sort()).toEqual(
    [onDisk.sandboxId, inMemory.sandboxId].sort(),
  );

  await sdk.connect(onDisk.sandboxId, {});
  expect(await detail(info, onDisk.sandboxId)).toMatchObject({ state: 'running', envdAccessToken: tokens[onDisk.sandboxId] });
  expect(await sdk.call(onDisk.sandboxId, 'files.read', '/home/user/disk.txt')).toBe('paused to disk');
  const inside = await sdk.call<{ stdout: string }>(
    onDisk.sandboxId,
    'commands.run',
    'echo $KEPT; cat /data/from-api.txt; echo; cat /data/from-sandbox.txt',
  );
  expect(inside.stdout).toBe('disk\nwritten through the file API\nwritten inside\n');

  await sdk.connect(inMemory.sandboxId, {});
  expect(await detail(info, inMemory.sandboxId)).toMatchObject({ state: 'running', envdAccessToken: tokens[inMemory.sandboxId] });
  expect(await sdk.call(inMemory.sandboxId, 'files.read', '/home/user/memory.txt')).toBe('paused in memory');
  expect((await sdk.call<{ stdout: string }>(inMemory.sandboxId, 'commands.run', 'echo $KEPT')).stdout).toBe('memory\n');

  expect((await sdk.list({}, 1, 'listSnapshots'))[0].items).toContainEqual(expect.objectContaining({ snapshotId: snap.snapshotId }));
  const fromSnap = await sdk.create(snap.snapshotId, {});
  expect(await sdk.call(fromSnap.sandboxId, 'files.read', '/home/user/disk.txt')).toBe('paused to disk');

  await sdk.volume('connect', vol.volumeId, {});
  expect(await sdk.volumeCall(vol.volumeId, 'readFile', '/from-sandbox.txt')).toBe('written inside\n');
  expect(await sdk.volume('list', {})).toContainEqual({ volumeId: vol.volumeId, name: 'kept-data' });

  for (const id of [onDisk.sandboxId, inMemory.sandboxId, fromSnap.sandboxId]) expect(await sdk.static('kill', id, {})).toBe(true);
  expect(await sdk.static('deleteSnapshot', snap.snapshotId, {})).toBe(true);
  expect(await sdk.volume('destroy', vol.volumeId, {})).toBe(true);
});
