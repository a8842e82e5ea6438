/**
 * Volumes on the real runtime, driven by the unmodified E2B SDK: `Volume.create/list/getInfo/destroy`,
 * `Sandbox.create({volumeMounts})` in two sandboxes at once, the volume file API with the volume's token (found by
 * the SDK through E2B_VOLUME_API_URL), a volume that outlives the sandboxes that wrote it, destroy refused while
 * mounted, bad mounts refused with nothing made, the size limit and the team's stored bytes, and a sandbox that
 * plants links in its volume to reach the host through the file API. Root only; one link into the root namespace on
 * a /24 of its own.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import type { AgentPayload } from '../../../src/runtime/agent-payload';
import { DEFAULT_ID_MAPPING } from '../../../src/runtime/id-shift';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { adminCall, startPlatformAndGateway } from './helpers/platform-and-gateway';

jest.setTimeout(180_000);

const MiB = 1024 * 1024;
/** Small, so the limit is reached in a test: the smallest a volume with a disk of its own may have. */
const MAX_BYTES = 64 * MiB;

let stateDir: string;
let agent: AgentPayload;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skv-'));
  agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, { platform: { volumeMaxBytes: MAX_BYTES } }));
  sdk = await SdkDriver.start({ E2B_VOLUME_API_URL: platform.url });
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  for (const record of (await platform?.sandboxes.all()) ?? []) await platform.sandboxes.kill(record.sandboxID).catch(() => {});
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

async function run(sandboxID: string, cmd: string, user?: string): Promise<string> {
  return (await sdk.call<{ stdout: string }>(sandboxID, 'commands.run', cmd, user ? { user } : {})).stdout;
}

const volumeDir = (volumeId: string) => join(stateDir, 'volumes', volumeId);

test('a volume mounted in two sandboxes: written in one, read in the other at once and through the file API; it outlives both', async () => {
  const vol = await sdk.volume<{ volumeId: string; name: string }>('create', 'shared-data', opts);
  expect(vol.name).toBe('shared-data');
  expect(await sdk.volume('list', opts)).toContainEqual({ volumeId: vol.volumeId, name: 'shared-data' });
  expect(await sdk.volume('getInfo', vol.volumeId, opts)).toMatchObject({
    volumeId: vol.volumeId,
    name: 'shared-data',
    token: expect.any(String),
  });

  const a = await sdk.create('base', { ...opts, volumeMounts: { '/data': 'shared-data' } });
  const b = await sdk.create('base', { ...opts, volumeMounts: { '/home/user/shared': 'shared-data' } });
  expect(await sdk.call(a.sandboxId, 'getInfo')).toMatchObject({ volumeMounts: [{ name: 'shared-data', path: '/data' }] });

  // The default user writes it (the volume's root is open to every user of the sandbox); root inside is root of it.
  await run(a.sandboxId, 'echo from-a > /data/a.txt && mkdir /data/sub && echo deep > /data/sub/d.txt');
  expect(await run(b.sandboxId, 'cat /home/user/shared/a.txt /home/user/shared/sub/d.txt')).toBe('from-a\ndeep\n');
  expect(await run(b.sandboxId, 'stat -c %U:%G /home/user/shared/a.txt')).toBe('user:user\n');
  expect(await run(b.sandboxId, 'stat -c %U /home/user/shared', 'root')).toBe('root\n');
  // On the host those are the ids of the sandboxes' user namespace.
  expect(fs.statSync(join(volumeDir(vol.volumeId), 'a.txt')).uid).toBe(DEFAULT_ID_MAPPING.base + 1000);
  expect(fs.statSync(volumeDir(vol.volumeId)).uid).toBe(DEFAULT_ID_MAPPING.base);

  // The file API, with the volume's token.
  expect(await sdk.volumeCall(vol.volumeId, 'readFile', '/a.txt')).toBe('from-a\n');
  const written = await sdk.volumeCall<{ path: string; size: number; uid: number; type: string }>(
    vol.volumeId,
    'writeFile',
    '/api.txt',
    'from the API',
  );
  expect(written).toMatchObject({ path: '/api.txt', size: 12, uid: 1000, type: 'file' });
  expect(await run(a.sandboxId, 'cat /data/api.txt')).toBe('from the API');
  const listed = await sdk.volumeCall<Array<{ path: string; type: string }>>(vol.volumeId, 'list', '/', { depth: 2 });
  expect(listed.map((e) => `${e.type} ${e.path}`).sort()).toEqual(['directory /sub', 'file /a.txt', 'file /api.txt', 'file /sub/d.txt']);
  await sdk.volumeCall(vol.volumeId, 'makeDir', '/x/y/z', { force: true });
  expect(await run(b.sandboxId, 'test -d /home/user/shared/x/y/z && echo yes')).toBe('yes\n');
  const changed = await sdk.volumeCall<{ mode: number; uid: number }>(vol.volumeId, 'updateMetadata', '/api.txt', { mode: 0o600, uid: 0 });
  expect(changed).toMatchObject({ mode: 0o600, uid: 0 });
  expect(await run(a.sandboxId, 'stat -c %a:%U /data/api.txt')).toBe('600:root\n');
  expect(await sdk.volumeCall(vol.volumeId, 'exists', '/sub/d.txt')).toBe(true);
  await sdk.volumeCall(vol.volumeId, 'remove', '/sub');
  expect(await sdk.volumeCall(vol.volumeId, 'exists', '/sub/d.txt')).toBe(false);
  expect(await run(a.sandboxId, 'ls /data/sub 2>&1 || true')).toMatch(/No such file/);
  await expect(sdk.volumeCall(vol.volumeId, 'readFile', '/nope.txt')).rejects.toMatchObject({ sdkName: 'VolumePathNotFoundError' });

  // Destroy while mounted: refused, nothing removed.
  await expect(sdk.volume('destroy', vol.volumeId, opts)).rejects.toThrow(/mounted by sandbox\(es\).*kill them first/);
  expect(await sdk.volumeCall(vol.volumeId, 'readFile', '/a.txt')).toBe('from-a\n');

  // A sandbox paused to disk mounts it again when it starts from its files.
  expect(await sdk.call(a.sandboxId, 'pause', { keepMemory: false })).toBe(true);
  await sdk.volumeCall(vol.volumeId, 'writeFile', '/while-paused.txt', 'P');
  await sdk.connect(a.sandboxId, opts);
  expect(await run(a.sandboxId, 'cat /data/while-paused.txt')).toBe('P');

  for (const id of [a.sandboxId, b.sandboxId]) expect(await sdk.call(id, 'kill')).toBe(true);
  // Both are gone; the volume and its files are not.
  expect(await sdk.volumeCall(vol.volumeId, 'readFile', '/a.txt')).toBe('from-a\n');
  const c = await sdk.create('base', { ...opts, volumeMounts: { '/mnt/v': 'shared-data' } });
  expect(await run(c.sandboxId, 'cat /mnt/v/a.txt')).toBe('from-a\n');
  expect(await sdk.call(c.sandboxId, 'kill')).toBe(true);

  expect(await sdk.volume('destroy', vol.volumeId, opts)).toBe(true);
  expect(fs.existsSync(volumeDir(vol.volumeId))).toBe(false);
  expect(fs.existsSync(`${volumeDir(vol.volumeId)}.disk`)).toBe(false);
  await expect(sdk.volume('getInfo', vol.volumeId, opts)).rejects.toMatchObject({ sdkName: 'VolumeNotFoundError' });
  expect(await sdk.volume('destroy', vol.volumeId, opts)).toBe(false);
});

const admin = (method: string, path: string, body: unknown) => adminCall(opts, method, path, body);

test("bad mounts: unknown volume, a relative or system path, another team's volume: a clear 4xx and nothing made", async () => {
  const vol = await sdk.volume<{ volumeId: string }>('create', 'bad-input', opts);
  await admin('POST', '/admin/teams', { name: 'vol-other', quotas: {} });
  const key = (await admin('POST', '/admin/keys', { team: 'vol-other', name: 'k' })).key as string;
  const other = { ...opts, apiKey: key };
  const before = (await platform.sandboxes.all()).length;

  await expect(sdk.create('base', { ...opts, volumeMounts: { '/data': 'no-such-volume' } })).rejects.toThrow(
    /volume "no-such-volume" not found in this team/,
  );
  await expect(sdk.create('base', { ...opts, volumeMounts: { data: 'bad-input' } })).rejects.toThrow(/"data" is not an absolute path/);
  for (const path of ['/', '/proc', '/etc/x', '/dev', '/sys', '/usr', '/opt', '/opt/sandbox-kit/bundle'])
    await expect(sdk.create('base', { ...opts, volumeMounts: { [path]: 'bad-input' } })).rejects.toThrow(/400: .*volumeMounts/);
  await expect(sdk.create('base', { ...opts, volumeMounts: { '/data/../etc': 'bad-input' } })).rejects.toThrow(/canonical form/);
  // Another team's volume is as unknown as a missing one, for mounts and for the volume endpoints alike.
  await expect(sdk.create('base', { ...other, volumeMounts: { '/data': 'bad-input' } })).rejects.toThrow(/not found in this team/);
  await expect(sdk.volume('getInfo', vol.volumeId, other)).rejects.toMatchObject({ sdkName: 'VolumeNotFoundError' });
  expect(await sdk.volume('destroy', vol.volumeId, other)).toBe(false);
  expect(await sdk.volume('list', other)).toEqual([]);
  await expect(sdk.volume('create', '../escape', opts)).rejects.toThrow(/expected a volume name/);
  await expect(sdk.volume('create', 'bad-input', opts)).rejects.toThrow(/has a volume named "bad-input" already/);
  // The same name in another team is that team's own volume.
  const theirs = await sdk.volume<{ volumeId: string }>('create', 'bad-input', other);
  expect(theirs.volumeId).not.toBe(vol.volumeId);

  expect((await platform.sandboxes.all()).length).toBe(before);
  expect(await sdk.volume('destroy', theirs.volumeId, other)).toBe(true);
  expect(await sdk.volume('destroy', vol.volumeId, opts)).toBe(true);
});

test('a sandbox that plants links and FIFOs in its volume reaches nothing of the host through the file API', async () => {
  const vol = await sdk.volume<{ volumeId: string }>('create', 'hostile', opts);
  const s = await sdk.create('base', { ...opts, volumeMounts: { '/v': 'hostile' } });
  await run(
    s.sandboxId,
    'ln -s /etc /v/etc && ln -s /etc/passwd /v/passwd && ln -s / /v/root && mkfifo /v/fifo && mkdir /v/d && ln -s /etc /v/d/up',
  );
  // Other tests add users to the host's passwd meanwhile: compare what this test could change, its mode and root's line.
  const passwdMode = fs.statSync('/etc/passwd').mode;
  const rootLine = /^root:.*$/m.exec(fs.readFileSync('/etc/passwd', 'utf8'))?.[0];

  for (const path of ['/passwd', '/etc/passwd', '/root/etc/passwd', '/d/up/passwd', '/../../../../etc/passwd', '/fifo'])
    await expect(sdk.volumeCall(vol.volumeId, 'readFile', path)).rejects.toThrow(/400|404/);
  await expect(sdk.volumeCall(vol.volumeId, 'writeFile', '/etc/planted', 'x')).rejects.toThrow(/400/);
  await expect(sdk.volumeCall(vol.volumeId, 'makeDir', '/root/tmp/planted', { force: true })).rejects.toThrow(/400/);
  await expect(sdk.volumeCall(vol.volumeId, 'updateMetadata', '/passwd', { mode: 0o777 })).rejects.toThrow(/400/);
  await expect(sdk.volumeCall(vol.volumeId, 'list', '/etc')).rejects.toThrow(/400/);
  // A link is an entry of its own: stat'ed, listed and removed as itself.
  expect(await sdk.volumeCall(vol.volumeId, 'getInfo', '/passwd')).toMatchObject({ type: 'symlink', target: '/etc/passwd' });
  await sdk.volumeCall(vol.volumeId, 'remove', '/d');
  await sdk.volumeCall(vol.volumeId, 'remove', '/etc');
  // Overwriting a link replaces the link, only with force.
  await expect(sdk.volumeCall(vol.volumeId, 'writeFile', '/passwd', 'mine')).rejects.toThrow(/symbolic link/);
  await sdk.volumeCall(vol.volumeId, 'writeFile', '/passwd', 'mine', { force: true });
  expect(await run(s.sandboxId, 'cat /v/passwd')).toBe('mine');

  expect(fs.statSync('/etc/passwd').mode).toBe(passwdMode);
  expect(/^root:.*$/m.exec(fs.readFileSync('/etc/passwd', 'utf8'))?.[0]).toBe(rootLine);
  expect(rootLine).toMatch(/^root:x:0:0:/);
  expect(fs.existsSync('/etc/planted')).toBe(false);
  expect(fs.existsSync('/tmp/planted')).toBe(false);
  expect(fs.statSync('/etc').isDirectory()).toBe(true);

  // Without the volume's token nothing is answered.
  const wrong = await fetch(`${platform.url}/volumecontent/${vol.volumeId}/file?path=%2Fpasswd`, {
    headers: { authorization: 'Bearer wrong' },
  });
  expect(wrong.status).toBe(401);
  const none = await fetch(`${platform.url}/volumecontent/${vol.volumeId}/dir?path=%2F`);
  expect(none.status).toBe(401);
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
  expect(await sdk.volume('destroy', vol.volumeId, opts)).toBe(true);
});

test("the size limit and the team's stored bytes bound writes through the file API, and a refused write leaves nothing", async () => {
  const vol = await sdk.volume<{ volumeId: string }>('create', 'limited', opts);
  await sdk.volumeCall(vol.volumeId, 'writeFile', '/fits.bin', 'a'.repeat(MAX_BYTES / 2));
  await expect(sdk.volumeCall(vol.volumeId, 'writeFile', '/over.bin', 'b'.repeat(MAX_BYTES))).rejects.toThrow(
    new RegExp(`413: .*limited to ${MAX_BYTES} bytes.*nothing was written`),
  );
  expect(await sdk.volumeCall(vol.volumeId, 'exists', '/over.bin')).toBe(false);
  expect(fs.readdirSync(volumeDir(vol.volumeId))).toEqual(['fits.bin']);
  expect(await sdk.volume('destroy', vol.volumeId, opts)).toBe(true);

  await admin('POST', '/admin/teams', { name: 'vol-small', quotas: { templateBytes: 256 * 1024 } });
  const key = (await admin('POST', '/admin/keys', { team: 'vol-small', name: 'k' })).key as string;
  const small = { ...opts, apiKey: key };
  const mine = await sdk.volume<{ volumeId: string }>('create', 'team-bytes', small);
  await sdk.volumeCall(mine.volumeId, 'writeFile', '/a.bin', 'a'.repeat(100 * 1024));
  await expect(sdk.volumeCall(mine.volumeId, 'writeFile', '/b.bin', 'b'.repeat(200 * 1024))).rejects.toThrow(/quota exceeded/);
  expect(await sdk.volumeCall(mine.volumeId, 'exists', '/b.bin')).toBe(false);
  // What it holds is given back when the file goes: the write fits now.
  await sdk.volumeCall(mine.volumeId, 'remove', '/a.bin');
  await sdk.volumeCall(mine.volumeId, 'writeFile', '/b.bin', 'b'.repeat(200 * 1024));
  expect(await sdk.volume('destroy', mine.volumeId, small)).toBe(true);
});

test("what a sandbox writes into its volume counts against its team's stored bytes: over the quota, writes, mounts and volume creates are refused until room is made", async () => {
  const QUOTA = 8 * MiB;
  await admin('POST', '/admin/teams', { name: 'vol-inside', quotas: { templateBytes: QUOTA } });
  const key = (await admin('POST', '/admin/keys', { team: 'vol-inside', name: 'k' })).key as string;
  const team = { ...opts, apiKey: key };
  const stored = async () => {
    const teams = (await adminCall(opts, 'GET', '/admin/teams', undefined)) as unknown as Array<{
      name: string;
      usage: { templateBytes: number };
    }>;
    return teams.find((t) => t.name === 'vol-inside')?.usage.templateBytes as number;
  };
  const vol = await sdk.volume<{ volumeId: string }>('create', 'inside', team);
  const s = await sdk.create('base', { ...team, volumeMounts: { '/data': 'inside' } });

  // Written inside only, no file API call: the team's usage shows it (the volume's disk, measured when asked).
  await run(s.sandboxId, 'head -c 3145728 /dev/urandom > /data/a.bin');
  const afterA = await stored();
  expect(afterA).toBeGreaterThanOrEqual(3 * MiB);
  expect(afterA).toBeLessThan(4 * MiB);
  // Under the quota: the file API writes.
  await sdk.volumeCall(vol.volumeId, 'writeFile', '/api.bin', 'x'.repeat(MiB));

  // The volume has room, the team does not: the sandbox's write lands, and the team is over its quota.
  await run(s.sandboxId, 'head -c 6291456 /dev/urandom > /data/b.bin');
  expect(await stored()).toBeGreaterThan(QUOTA);
  const over = /quota exceeded: stored bytes \(templateBytes\) is 8388608 for this team/;
  await expect(sdk.volumeCall(vol.volumeId, 'writeFile', '/more.bin', 'm')).rejects.toThrow(over);
  expect(await sdk.volumeCall(vol.volumeId, 'exists', '/more.bin')).toBe(false);
  await expect(sdk.volumeCall(vol.volumeId, 'makeDir', '/newdir')).rejects.toThrow(over);
  expect(await sdk.volumeCall(vol.volumeId, 'exists', '/newdir')).toBe(false);
  await expect(sdk.volume('create', 'second', team)).rejects.toThrow(over);
  expect(await sdk.volume('list', team)).toEqual([{ volumeId: vol.volumeId, name: 'inside' }]);
  const before = (await platform.sandboxes.all()).length;
  await expect(sdk.create('base', { ...team, volumeMounts: { '/data': 'inside' } })).rejects.toThrow(over);
  expect((await platform.sandboxes.all()).length).toBe(before);
  // Another team is not held to this team's quota.
  const elsewhere = await sdk.volume<{ volumeId: string }>('create', 'inside', opts);
  expect(await sdk.volume('destroy', elsewhere.volumeId, opts)).toBe(true);

  // Room made inside is room again, at once.
  await run(s.sandboxId, 'rm /data/b.bin');
  expect(await stored()).toBeLessThan(QUOTA);
  await sdk.volumeCall(vol.volumeId, 'writeFile', '/more.bin', 'm');
  const t = await sdk.create('base', { ...team, volumeMounts: { '/v': 'inside' } });
  expect(await run(t.sandboxId, 'cat /v/more.bin')).toBe('m');
  for (const id of [s.sandboxId, t.sandboxId]) expect(await sdk.call(id, 'kill')).toBe(true);
  expect(await sdk.volume('destroy', vol.volumeId, team)).toBe(true);
  expect(await stored()).toBe(0);
});

test("within its size a sandbox writes its volume, and the file API reads the same bytes; df in the sandbox shows the volume's size", async () => {
  const vol = await sdk.volume<{ volumeId: string }>('create', 'roomy', opts);
  const s = await sdk.create('base', { ...opts, volumeMounts: { '/data': 'roomy' } });
  const size = Number((await run(s.sandboxId, 'df -B1 --output=size /data | tail -n 1')).trim());
  expect(size).toBeLessThanOrEqual(MAX_BYTES);
  expect(size).toBeGreaterThan(MAX_BYTES * 0.8);
  await run(s.sandboxId, 'seq 1 1000000 > /data/seq.txt');
  const inside = (await run(s.sandboxId, 'sha256sum < /data/seq.txt')).split(' ')[0];
  const read = await sdk.volumeCall<string>(vol.volumeId, 'readFile', '/seq.txt');
  expect(createHash('sha256').update(read).digest('hex')).toBe(inside);
  expect(await sdk.volumeCall(vol.volumeId, 'getInfo', '/seq.txt')).toMatchObject({ size: read.length, type: 'file' });
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
  expect(await sdk.volume('destroy', vol.volumeId, opts)).toBe(true);
});

test("a sandbox writing past its volume's size gets ENOSPC inside; the host gives the volume at most its size; another volume and the file API go on", async () => {
  const full = await sdk.volume<{ volumeId: string }>('create', 'fill-me', opts);
  const other = await sdk.volume<{ volumeId: string }>('create', 'neighbour', opts);
  const s = await sdk.create('base', { ...opts, volumeMounts: { '/data': 'fill-me', '/other': 'neighbour' } });
  // As the default user and as root inside: neither gets past the size (root inside is no root of the host).
  for (const user of ['user', 'root']) {
    const out = await run(
      s.sandboxId,
      `dd if=/dev/zero of=/data/fill-${user} bs=1M count=${MAX_BYTES / MiB + 16} 2>&1; echo "exit $?"`,
      user,
    );
    expect(out).toMatch(/No space left on device/);
    expect(out).toMatch(/exit 1\n$/);
  }
  const written = Number((await run(s.sandboxId, 'du -s -B1 /data | cut -f1')).trim());
  expect(written).toBeLessThanOrEqual(MAX_BYTES);
  // On the host the volume is its disk's image: never more than the size allocated, whatever the sandbox wrote.
  const image = fs.statSync(`${volumeDir(full.volumeId)}.disk`);
  expect(image.size).toBe(MAX_BYTES);
  expect(image.blocks * 512).toBeLessThanOrEqual(MAX_BYTES);
  // The other volume is a disk of its own: it takes writes as before.
  expect(await run(s.sandboxId, 'head -c 8388608 /dev/urandom > /other/n.bin && echo ok')).toBe('ok\n');
  expect(await sdk.volumeCall(other.volumeId, 'getInfo', '/n.bin')).toMatchObject({ size: 8 * MiB });
  // The file API sees the same bytes, and a write into the full volume is refused with nothing kept.
  const filled = Number((await run(s.sandboxId, 'stat -c %s /data/fill-user')).trim());
  expect(await sdk.volumeCall(full.volumeId, 'getInfo', '/fill-user')).toMatchObject({ size: filled });
  await expect(sdk.volumeCall(full.volumeId, 'writeFile', '/more.bin', 'm'.repeat(MiB))).rejects.toThrow(/413: .*nothing was written/);
  expect(await sdk.volumeCall(full.volumeId, 'exists', '/more.bin')).toBe(false);
  // Room made inside is room for the file API at once.
  await run(s.sandboxId, 'rm /data/fill-user /data/fill-root');
  await sdk.volumeCall(full.volumeId, 'writeFile', '/more.bin', 'm'.repeat(MiB));
  expect(await run(s.sandboxId, 'stat -c %s /data/more.bin')).toBe(`${MiB}\n`);
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
  for (const v of [full, other]) expect(await sdk.volume('destroy', v.volumeId, opts)).toBe(true);
});
