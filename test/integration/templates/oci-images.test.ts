/**
 * Templates from OCI images, pulled from a real registry: the lab's `docker-registry` on loopback, open and with
 * htpasswd users. The images are made here with umoci from the cached Debian root file system (a multi-layer image
 * with a whiteout, an opaque directory, a symlink, a setuid file, a hard link, files of another owner, and an image
 * config with Env, WorkingDir and User) and pushed with skopeo. The unmodified SDK builds templates from them by
 * `fromImage` (with and without credentials) and from a Dockerfile whose FROM names one; a container over the
 * template's layers, in the sandboxes' user namespace, sees exactly the files, modes and owners the image has. Wrong
 * credentials, an unknown tag, an image of another architecture and a blob that does not match its digest are
 * refused with errors naming the cause, and leave nothing behind in the layer store.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OciLayoutImages } from '../../../src/lab/oci-images';
import { type LabRegistry, startLabRegistry } from '../../../src/lab/registry';
import { MmdebstrapImages } from '../../../src/runtime';
import { runScript } from '../../helpers/node-script';
import { addMultiLayers } from './helpers/multi-layer-image';
import { API_KEY, runIn, startTemplatePlatform, type TemplatePlatform } from '../platform/templates/helpers/template-platform';

jest.setTimeout(900_000);

const USER = { username: 'labuser', password: `pw-${randomBytes(6).toString('hex')}` };

let platform: TemplatePlatform;
let open: LabRegistry;
let locked: LabRegistry;
let work: string;
let images: OciLayoutImages;
let corruptLayer: string;

interface Built {
  logs: string[];
  done?: { templateId: string; buildId: string };
  error?: { name: string; message: string };
}

async function build(
  name: string,
  from: { image: string; credentials?: typeof USER } | { dockerfile: string },
  run?: string,
): Promise<Built> {
  const messages: Array<Record<string, unknown>> = [];
  const r = await runScript(
    join(__dirname, 'helpers', 'oci-sdk-client.ts'),
    { apiUrl: platform.url, apiKey: API_KEY, name, from, run },
    (m) => messages.push(m),
  );
  if (r.code !== 0) throw new Error(`the SDK client exited ${r.code}: ${r.stderr}`);
  const error = messages.find((m) => m.t === 'error');
  return {
    logs: messages.filter((m) => m.t === 'log').map((m) => String(m.message)),
    done: messages.find((m) => m.t === 'done')?.info as Built['done'],
    error: error ? { name: String(error.name), message: String(error.message) } : undefined,
  };
}

function ready(b: Built): NonNullable<Built['done']> {
  if (!b.done) throw new Error(`build failed: ${b.error?.message}\n${b.logs.slice(-30).join('\n')}`);
  return b.done;
}

const layerStore = () => join(platform.dataDir, 'images', 'layers', '100000-65536');
const storedLayers = () => (fs.existsSync(layerStore()) ? fs.readdirSync(layerStore()).sort() : []);

beforeAll(async () => {
  const rootfs = await new MmdebstrapImages().rootfs('debian:bookworm');
  work = await mkdtemp(join(tmpdir(), 'sko-images-'));
  [platform, open, locked] = await Promise.all([
    startTemplatePlatform(),
    startLabRegistry({ dir: join(work, 'registry-open') }),
    startLabRegistry({ dir: join(work, 'registry-locked'), users: { [USER.username]: USER.password } }),
  ]);
  images = new OciLayoutImages(join(work, 'layout'));
  await images.init('empty');
  await images.insert('empty', rootfs, '/', 'base');

  // The files whose modes, owners and links the sandbox must see exactly, and the image's own user.
  await addMultiLayers(images, { rootfs, work, from: 'base', to: 'multi' });

  // Sharing the base layer; another architecture; a layer the registry will serve damaged.
  const c = join(work, 'layer-c');
  fs.mkdirSync(c);
  fs.writeFileSync(join(c, 'second'), 'second image\n');
  await images.insert('base', c, '/opt', 'second');
  await images.configure('second', { architecture: 'arm64' }, 'arm');
  const d = join(work, 'layer-d');
  fs.mkdirSync(d);
  fs.writeFileSync(join(d, 'noise'), randomBytes(4096));
  await images.insert('base', d, '/opt', 'corrupt');
  corruptLayer = images.layerDigests('corrupt').at(-1)!;

  for (const tag of ['multi', 'second', 'arm', 'corrupt']) await images.push(tag, `${open.host}/lab/img:${tag}`);
  await images.push('second', `${locked.host}/lab/private:1`, USER);
  // The registry now serves other bytes under the layer's digest.
  const blob = open.blobFile(corruptLayer);
  fs.writeFileSync(blob, randomBytes(fs.statSync(blob).size));
});

afterAll(async () => {
  await Promise.allSettled([platform?.stop(), open?.stop(), locked?.stop()]);
  if (work) await rm(work, { recursive: true, force: true });
});

test('a multi-layer image: exact files, modes, owners and links; whiteout and opaque directory applied; Env, WorkingDir and User apply', async () => {
  const built = ready(await build('ociMulti', { image: `${open.host}/lab/img:multi` }));
  const t = await platform.service.resolve('ociMulti');
  expect(t).toMatchObject({ templateID: built.templateId, user: 'app', workdir: '/srv/app', envs: { APP_MODE: 'lab' } });
  const probe = await runIn(
    platform,
    t!,
    [
      'whoami; pwd; echo "$APP_MODE"',
      'cd /data',
      'for f in file hl suid owned dir/new; do stat -c "%n %a %u %g %h" "$f"; done',
      'readlink link; cat link',
      'stat -c %i file hl | sort -u | wc -l',
      'test -e gone && echo gone-present || echo gone-absent',
      'ls -A dir',
      'stat -c "%U %a" /srv/app',
    ].join('\n'),
  );
  expect(probe.out.split('\n')).toEqual([
    'app',
    '/srv/app',
    'lab',
    'file 644 0 0 2',
    'hl 644 0 0 2',
    'suid 4755 0 0 1',
    'owned 640 1000 1000 1',
    'dir/new 644 0 0 1',
    'file',
    'content',
    '1',
    'gone-absent',
    'new',
    'app 755',
  ]);
  expect(probe.code).toBe(0);
  // On the host the layers are owned by the sandboxes' id range: inside root is 100000, inside 1000 is 101000.
  const owned = t!.layers.map((l) => join(l, 'data', 'owned')).find((p) => fs.existsSync(p))!;
  expect([fs.statSync(owned).uid, fs.statSync(owned).gid]).toEqual([101_000, 101_000]);
});

test('a second image sharing the base layer stores it once; a Dockerfile whose FROM names it builds', async () => {
  const before = storedLayers();
  ready(await build('ociSecond', { image: `${open.host}/lab/img:second` }));
  const added = storedLayers().filter((l) => !before.includes(l));
  expect(added).toHaveLength(1);
  const [first, second] = await Promise.all([platform.service.resolve('ociMulti'), platform.service.resolve('ociSecond')]);
  expect(second!.layers.at(-1)).toBe(first!.layers.at(-1));
  expect(second!.user).toBe('user');

  const fromFile = ready(
    await build('ociDockerfile', { dockerfile: `FROM ${open.host}/lab/img:second\nRUN cat /opt/second > /opt/copied\n` }),
  );
  const t = await platform.service.resolve('ociDockerfile');
  expect(t!.templateID).toBe(fromFile.templateId);
  expect(storedLayers().filter((l) => !before.includes(l))).toHaveLength(1);
  expect((await runIn(platform, t!, 'cat /opt/copied')).out).toBe('second image');
});

test('a private image builds with the right credentials; none or a wrong password is a clear error naming the registry', async () => {
  const image = `${locked.host}/lab/private:1`;
  const none = await build('ociPrivateNone', { image });
  expect(none.done).toBeUndefined();
  expect(none.error?.message).toContain(`registry ${locked.host} refused access`);
  expect(none.error?.message).toContain('without credentials');
  const wrong = await build('ociPrivateWrong', { image, credentials: { ...USER, password: 'not-the-password' } });
  expect(wrong.done).toBeUndefined();
  expect(wrong.error?.message).toContain(`registry ${locked.host} refused access`);
  expect(wrong.error?.message).toContain('with the credentials given');

  ready(await build('ociPrivate', { image, credentials: USER }));
  const t = await platform.service.resolve('ociPrivate');
  expect((await runIn(platform, t!, 'cat /opt/second')).out).toBe('second image');
});

test('an unknown tag, another architecture and a damaged blob are refused with clear errors; nothing is half-written', async () => {
  const before = storedLayers();
  const unknown = await build('ociUnknown', { image: `${open.host}/lab/img:no-such-tag` });
  expect(unknown.error?.message).toContain(`registry ${open.host} has no image "${open.host}/lab/img:no-such-tag"`);
  const arm = await build('ociArm', { image: `${open.host}/lab/img:arm` });
  expect(arm.error?.message).toContain('is for linux/arm64; this host runs linux/amd64');
  const damaged = await build('ociDamaged', { image: `${open.host}/lab/img:corrupt` });
  expect(damaged.done).toBeUndefined();
  expect(damaged.error?.message).toMatch(/does not match its digest/);
  for (const name of ['ociUnknown', 'ociArm', 'ociDamaged']) expect(await platform.service.resolve(name)).toBeUndefined();
  expect(storedLayers()).toEqual(before);
  expect(fs.existsSync(join(platform.dataDir, 'images', 'blobs', 'sha256', corruptLayer.split(':')[1]!))).toBe(false);
  expect(fs.readdirSync(join(platform.dataDir, 'images', 'tmp'))).toEqual([]);
});
