import { parseImageConfig } from '../../../src/runtime/images/image-config';
import { whiteoutsOf } from '../../../src/runtime/images/layer-unpack';
import { allowsInsecure, canonicalReference, ecrRegion, parseImageReference } from '../../../src/runtime/images/reference';
import { classifySkopeoError, type SkopeoContext } from '../../../src/runtime/images/skopeo';

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
    ['pinging container registry x: Get "https://x/v2/": http: server gave HTTP response to HTTPS client', 'tls', /insecureRegistries/],
    ['dial tcp 127.0.0.1:5000: connect: connection refused', 'unreachable', /cannot be reached/],
  ])('%s', (stderr, kind, message) => {
    const e = classifySkopeoError(ctx, stderr);
    expect(e.kind).toBe(kind);
    expect(e.message).toMatch(message);
  });
});
