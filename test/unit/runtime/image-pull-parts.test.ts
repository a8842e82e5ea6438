import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseImageConfig } from '../../../src/runtime/images/image-config';
import { whiteoutsOf } from '../../../src/runtime/images/layer-unpack';
import { allowsInsecure, canonicalReference, ecrRegion, isGcpRegistry, parseImageReference } from '../../../src/runtime/images/reference';
import {
  classifySkopeoError,
  copyArgv,
  inspectArgv,
  type RegistryCredentials,
  removeAuthFile,
  type SkopeoContext,
  skopeoEnv,
  writeAuthFile,
} from '../../../src/runtime/images/skopeo';

const parsed = (ref: string) => {
  const r = parseImageReference(ref);
  if (!r.ok) throw new Error(r.message);
  return r.ref;
};

describe('image references, read as Docker reads them', () => {
  test.each([
    ['python:3.12', 'docker.io/library/python:3.12'],
    ['ubuntu', 'docker.io/library/ubuntu:latest'],
    ['e2bdev/base', 'docker.io/e2bdev/base:latest'],
    ['ghcr.io/org/app:v1.2', 'ghcr.io/org/app:v1.2'],
    ['127.0.0.1:5000/lab/img:t', '127.0.0.1:5000/lab/img:t'],
    ['localhost/img', 'localhost/img:latest'],
    ['[::1]:5000/x', '[::1]:5000/x:latest'],
    [`alpine@sha256:${'a'.repeat(64)}`, `docker.io/library/alpine@sha256:${'a'.repeat(64)}`],
    ['123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:1', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:1'],
  ])('%s -> %s', (ref, canonical) => {
    expect(canonicalReference(parsed(ref))).toBe(canonical);
  });

  test.each(['', 'Python:3', 'a//b', 'img:bad tag', 'img@sha256:123', 'img:-x', '../x'])('%j is refused with the rule', (ref) => {
    const r = parseImageReference(ref);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('expected [registry[:port]/]repository');
  });

  test('plain HTTP only for loopback registries and the listed insecure ones', () => {
    expect(allowsInsecure('127.0.0.1:5000', [])).toBe(true);
    expect(allowsInsecure('localhost:5000', [])).toBe(true);
    expect(allowsInsecure('[::1]:5000', [])).toBe(true);
    expect(allowsInsecure('10.0.0.5:5000', [])).toBe(false);
    expect(allowsInsecure('registry.lan:5000', ['registry.lan:5000'])).toBe(true);
    expect(allowsInsecure('docker.io', ['registry.lan:5000'])).toBe(false);
  });

  test('ECR hosts are recognised with their region', () => {
    expect(ecrRegion('123456789012.dkr.ecr.us-east-2.amazonaws.com')).toBe('us-east-2');
    expect(ecrRegion('ghcr.io')).toBeUndefined();
  });
});

describe('layer whiteouts', () => {
  test('files and opaque directories, paths normalized', () => {
    expect(whiteoutsOf(['./', './d/', './d/.wh.gone', 'd/o/.wh..wh..opq', '.wh.top', 'd/keep'])).toEqual({
      hidden: ['d/gone', 'top'],
      opaque: ['d/o'],
    });
  });
  test('an entry climbing out of the layer is refused', () => {
    expect(() => whiteoutsOf(['../../etc/.wh.passwd'])).toThrow(/climbs out/);
  });
});

describe('image config', () => {
  test('Env, WorkingDir, User, Entrypoint, Cmd and the layer digests', () => {
    const d = `sha256:${'b'.repeat(64)}`;
    const c = parseImageConfig(
      JSON.stringify({
        os: 'linux',
        architecture: 'amd64',
        config: { Env: ['PATH=/usr/bin', 'A=1=2'], WorkingDir: '/app', User: 'app', Entrypoint: ['/e'], Cmd: ['run'] },
        rootfs: { type: 'layers', diff_ids: [d] },
      }),
    );
    expect(c).toEqual({
      os: 'linux',
      architecture: 'amd64',
      env: { PATH: '/usr/bin', A: '1=2' },
      workingDir: '/app',
      user: 'app',
      entrypoint: ['/e'],
      cmd: ['run'],
      diffIds: [d],
    });
  });
  test('a config that is not one is refused', () => {
    expect(() => parseImageConfig('nope')).toThrow(/not JSON/);
    expect(() => parseImageConfig(JSON.stringify({ rootfs: { diff_ids: ['md5:1'] } }))).toThrow(/not sha256/);
  });
});

describe("skopeo's failures as errors naming the registry", () => {
  const ctx: SkopeoContext = {
    ref: parsed('127.0.0.1:5000/lab/private:1'),
    shown: '127.0.0.1:5000/lab/private:1',
    insecureRegistries: [],
    platform: { os: 'linux', architecture: 'amd64' },
    scratchDir: '/nonexistent',
    timeoutMs: 1000,
  };
  test.each([
    [
      'reading manifest 1 in 127.0.0.1:5000/lab/private: unauthorized: authentication required',
      'auth',
      /registry 127\.0\.0\.1:5000 refused/,
    ],
    ['reading manifest nope in 127.0.0.1:5000/lab/private: manifest unknown: manifest unknown', 'not-found', /has no image/],
    ['choosing an image from manifest list: no image found in manifest list for architecture amd64', 'platform', /linux\/amd64/],
    ['writing blob: Digest did not match, expected sha256:aa, got sha256:bb', 'digest', /does not match its digest/],
    // Digests whose hex holds "401" and "404" (a CI run's corrupt blob read as a refusal).
    [
      `writing blob: happened during read: Digest did not match, expected sha256:405054ef7cf19401${'5'.repeat(48)}, got sha256:${'c'.repeat(20)}404${'d'.repeat(41)}`,
      'digest',
      /does not match its digest/,
    ],
    ['received unexpected HTTP status: 401 Unauthorized', 'auth', /refused access/],
    ['received unexpected HTTP status: 404 Not Found', 'not-found', /has no image/],
    // A port holding "401" and "404" is no status.
    ['dial tcp 127.0.0.1:40140: connect: connection refused', 'unreachable', /cannot be reached/],
    ['pinging container registry x: Get "https://x/v2/": http: server gave HTTP response to HTTPS client', 'tls', /insecureRegistries/],
    ['dial tcp 127.0.0.1:5000: connect: connection refused', 'unreachable', /cannot be reached/],
  ])('%s', (stderr, kind, message) => {
    const e = classifySkopeoError(ctx, stderr);
    expect(e.kind).toBe(kind);
    expect(e.message).toMatch(message);
  });
});

describe('credentials reach skopeo by file and environment, never by argument', () => {
  const ecrHost = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';
  const keys = { accessKeyId: 'AKIAEXAMPLEKEYID0000', secretAccessKey: 'secret/EXAMPLE+key0000000000000000000000', region: 'eu-west-1' };
  let scratchDir: string;
  beforeEach(() => {
    scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-auth-'));
  });
  afterEach(() => fs.rmSync(scratchDir, { recursive: true, force: true }));
  const ctxOf = (credentials: RegistryCredentials | undefined, registry = ecrHost): SkopeoContext => ({
    ref: parsed(`${registry}/team/app:1`),
    shown: `${registry}/team/app:1`,
    ...(credentials ? { credentials } : {}),
    insecureRegistries: [],
    platform: { os: 'linux', architecture: 'amd64' },
    scratchDir,
    timeoutMs: 1000,
  });

  test('a password goes into an auth file of mode 0600 in a directory of its own (0700), removed whole afterwards', () => {
    const ctx = ctxOf({ username: 'u', password: 'pa55-word' }, 'registry.example.com');
    const file = writeAuthFile(ctx)!;
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      auths: { 'registry.example.com': { auth: Buffer.from('u:pa55-word').toString('base64') } },
    });
    const argv = [...inspectArgv(ctx, 'docker://x', file), ...copyArgv(ctx, 'docker://x', file, '/l', '/b')].join(' ');
    expect(argv).not.toContain('pa55-word');
    expect(argv).not.toContain(Buffer.from('u:pa55-word').toString('base64'));
    removeAuthFile(file);
    expect(fs.readdirSync(scratchDir)).toEqual([]);
  });

  test("ECR keys: the helper is named in the file, the keys go to its environment alone, without the host's session, cache or home", () => {
    const ctx = ctxOf({ ecr: keys });
    const file = writeAuthFile(ctx)!;
    const text = fs.readFileSync(file, 'utf8');
    expect(JSON.parse(text)).toEqual({ credHelpers: { [ecrHost]: 'ecr-login' } });
    const host = { PATH: '/usr/bin', HOME: '/root', AWS_SESSION_TOKEN: 'host-session', AWS_PROFILE: 'ops', AWS_ACCESS_KEY_ID: 'host-key' };
    const env = skopeoEnv(ctx, host, file);
    expect(env).toMatchObject({
      AWS_ACCESS_KEY_ID: keys.accessKeyId,
      AWS_SECRET_ACCESS_KEY: keys.secretAccessKey,
      AWS_REGION: 'eu-west-1',
      AWS_ECR_DISABLE_CACHE: 'true',
      HOME: path.dirname(file),
      PATH: '/usr/bin',
    });
    expect(env.AWS_SESSION_TOKEN).toBeUndefined();
    expect(env.AWS_PROFILE).toBeUndefined();
    const argv = inspectArgv(ctx, `docker://${ecrHost}/team/app:1`, file).join(' ');
    for (const secret of [keys.accessKeyId, keys.secretAccessKey]) {
      expect(argv).not.toContain(secret);
      expect(text).not.toContain(secret);
    }
    removeAuthFile(file);
  });

  test("an ECR image without keys uses the host's own identity: its environment and home are left as they are", () => {
    const ctx = ctxOf({ ecr: {} });
    const file = writeAuthFile(ctx)!;
    const host = { HOME: '/root', AWS_PROFILE: 'ops' };
    expect(skopeoEnv(ctx, host, file)).toEqual({ ...host, AWS_REGION: 'eu-west-1' });
    removeAuthFile(file);
  });

  test('a refusal says what to check for the kind of credentials given', () => {
    const refused = 'reading manifest 1: unauthorized: authentication required';
    expect(classifySkopeoError(ctxOf({ ecr: keys }), refused).message).toMatch(
      new RegExp(`^registry ${ecrHost} refused access to .* with the AWS keys given: check .* fromAWSRegistry`),
    );
    expect(classifySkopeoError(ctxOf({ ecr: {} }), refused).message).toContain("with this host's own AWS identity (its instance role)");
    expect(classifySkopeoError(ctxOf({ username: '_json_key', password: '{}' }, 'gcr.io'), refused).message).toContain(
      'with the service account key given: check the key given to fromGCPRegistry',
    );
    expect(classifySkopeoError(ctxOf({ username: 'u', password: 'p' }, 'r.example'), refused).message).toContain(
      'with the credentials given: check the username and password',
    );
    expect(classifySkopeoError(ctxOf(undefined, 'r.example'), refused).message).toContain('without credentials: give them');
  });
});

describe('Google Cloud registries', () => {
  test.each([
    ['gcr.io', true],
    ['eu.gcr.io', true],
    ['europe-west1-docker.pkg.dev', true],
    ['ghcr.io', false],
    ['gcr.io.example.com', false],
    ['docker.io', false],
  ])('%s: %s', (host, gcp) => expect(isGcpRegistry(host)).toBe(gcp));
});
