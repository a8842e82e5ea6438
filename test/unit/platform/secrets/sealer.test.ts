/** Secret values at rest: sealed per secret and version, opened only with the same key and context. */
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateSecretsKey, SecretSealer } from '../../../../src/platform/secrets/sealer';

const dir = mkdtempSync(join(tmpdir(), 'sks-key-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a value opens with its key and context only; a changed byte, another context or another key fails without showing it', () => {
  const key = loadOrCreateSecretsKey(join(dir, 'a.key'));
  const sealer = new SecretSealer(key);
  const sealed = sealer.seal('the-value', 'sec_x:1');
  expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain('the-value');
  expect(sealer.seal('the-value', 'sec_x:1')).not.toBe(sealed);
  expect(sealer.open(sealed, 'sec_x:1')).toBe('the-value');
  expect(() => sealer.open(sealed, 'sec_x:2')).toThrow(/does not open/);
  expect(() => sealer.open(sealed, 'sec_y:1')).toThrow(/does not open/);
  const raw = Buffer.from(sealed, 'base64');
  raw[raw.length - 1] ^= 1;
  expect(() => sealer.open(raw.toString('base64'), 'sec_x:1')).toThrow(/does not open/);
  const other = new SecretSealer(loadOrCreateSecretsKey(join(dir, 'b.key')));
  let message = '';
  try {
    other.open(sealed, 'sec_x:1');
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toMatch(/does not open/);
  expect(message).not.toContain('the-value');
});

test('the key file is made 0600 once and kept; one others may read is refused', () => {
  const file = join(dir, 'c.key');
  const first = loadOrCreateSecretsKey(file);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(loadOrCreateSecretsKey(file).equals(first)).toBe(true);
  fs.chmodSync(file, 0o644);
  expect(() => loadOrCreateSecretsKey(file)).toThrow(/mode 644: .*chmod 600/);
  fs.writeFileSync(join(dir, 'd.key'), 'c2hvcnQ=\n', { mode: 0o600 });
  expect(() => loadOrCreateSecretsKey(join(dir, 'd.key'))).toThrow(/32 bytes/);
});
