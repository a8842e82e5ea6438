import { baseKey, stepKey } from '../../../../src/platform/templates/cache-key';
import { checkUpload, signUpload } from '../../../../src/platform/templates/upload-url';
import { splitNameTag } from '../../../../src/platform/templates/names';

describe('layer cache keys', () => {
  const base = baseKey('debian:bookworm', '/var/lib/bases/bookworm');
  const run = { type: 'RUN' as const, args: ['echo hi', 'root'] };

  test('the same parent and step give the same key; force is not part of it', () => {
    expect(stepKey(base, run)).toBe(stepKey(base, { ...run, force: true } as typeof run));
  });

  test('a different parent, argument, user or files hash gives a different key', () => {
    const keys = new Set([
      stepKey(base, run),
      stepKey(baseKey('debian:trixie', '/var/lib/bases/trixie'), run),
      stepKey(base, { type: 'RUN', args: ['echo ho', 'root'] }),
      stepKey(base, { type: 'RUN', args: ['echo hi', 'user'] }),
      stepKey(base, { type: 'COPY', args: ['a', '/a', '', ''], filesHash: 'a'.repeat(64) }),
      stepKey(base, { type: 'COPY', args: ['a', '/a', '', ''], filesHash: 'b'.repeat(64) }),
    ]);
    expect(keys.size).toBe(6);
  });

  test('keys chain: a changed earlier step changes every later key', () => {
    const runAfter = (parent: string) => stepKey(stepKey(parent, { type: 'ENV', args: ['A', '1'] }), run);
    expect(runAfter(base)).not.toBe(runAfter(stepKey(base, { type: 'ENV', args: ['A', '2'] })));
  });
});

describe('upload URLs', () => {
  const secret = Buffer.alloc(32, 7);
  const sig = { templateID: 'tpl1', hash: 'c'.repeat(64), expires: 2_000 };

  test('a URL signed by the platform is accepted until it expires', () => {
    expect(checkUpload(secret, sig, signUpload(secret, sig), 1_999)).toEqual({ ok: true });
    expect(checkUpload(secret, sig, signUpload(secret, sig), 2_001)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('expired'),
    });
  });

  test('another template, hash, expiry or secret does not match', () => {
    const good = signUpload(secret, sig);
    expect(checkUpload(secret, { ...sig, templateID: 'tpl2' }, good, 0).ok).toBe(false);
    expect(checkUpload(secret, { ...sig, hash: 'd'.repeat(64) }, good, 0).ok).toBe(false);
    expect(checkUpload(secret, { ...sig, expires: 3_000 }, good, 0).ok).toBe(false);
    expect(checkUpload(Buffer.alloc(32, 8), sig, good, 0).ok).toBe(false);
    expect(checkUpload(secret, sig, null, 0)).toMatchObject({ ok: false, reason: expect.stringContaining('no signature') });
  });
});

test('name:tag splits at the first colon', () => {
  expect(splitNameTag('proxy')).toEqual({ name: 'proxy' });
  expect(splitNameTag('proxy:v2')).toEqual({ name: 'proxy', tag: 'v2' });
});
