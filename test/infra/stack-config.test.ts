import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configFields, parseStackConfig, readStackFile } from '../../src/config';
import { loadInfraConfig, namespaceValues, PASSWORD_KEY } from '../../infra/stack-config';

const ROOT = join(__dirname, '..', '..');

describe('namespaceValues', () => {
  it('decodes structured values, keeps plain text, drops other namespaces and the secret', () => {
    expect(
      namespaceValues({
        'sandbox-kit:proxy': '{"port":443}',
        'sandbox-kit:brand': 'E2b',
        'sandbox-kit:proxyPassword': 'x'.repeat(20),
        'aws:region': 'eu-west-1',
      }),
    ).toEqual({ proxy: { port: 443 }, brand: 'E2b' });
  });

  it('leaves malformed JSON as text so the schema reports the key', () => {
    const raw = namespaceValues({ 'sandbox-kit:proxy': '{port: 443' });
    const result = parseStackConfig(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => i.key)).toEqual(['sandbox-kit:proxy']);
  });
});

describe('loadInfraConfig', () => {
  it('accepts an empty stack (every default) and notes that no password is set', () => {
    const loaded = loadInfraConfig({});
    expect(loaded.passwordSet).toBe(false);
    expect(loaded.config.proxy.port).toBe(8388);
    expect(loaded.config.egress.mode).toBe('dedicated');
  });

  it('reports config and password problems together, never the password itself', () => {
    const secret = 'tiny pass';
    expect(() => loadInfraConfig({ 'sandbox-kit:proxy': '{"port":0}', [PASSWORD_KEY]: secret })).toThrow(ConfigError);
    try {
      loadInfraConfig({ 'sandbox-kit:proxy': '{"port":0}', [PASSWORD_KEY]: secret });
    } catch (err) {
      const issues = (err as ConfigError).issues.map((i) => i.key);
      expect(issues).toEqual(['sandbox-kit:proxy.port', PASSWORD_KEY]);
      expect((err as Error).message).not.toContain(secret);
    }
  });

  it('refuses a typo in a key instead of ignoring it', () => {
    expect(() => loadInfraConfig({ 'sandbox-kit:egress': '{"generaton":2}' })).toThrow(/sandbox-kit:egress.generaton/);
  });
});

describe('Pulumi.dev.yaml', () => {
  const path = join(ROOT, 'Pulumi.dev.yaml');

  it('is a valid stack', () => {
    const file = readStackFile(path);
    expect(file.encrypted).toEqual([]);
    const result = parseStackConfig(file.values);
    expect(result.ok ? [] : result.issues).toEqual([]);
  });

  it('shows every key of the schema, the optional ones as valid commented examples', () => {
    // Uncommenting the example lines must still give a valid stack.
    // A zone needs a real domain: the example's zone comes with one.
    const text = readFileSync(path, 'utf8')
      .replace(/^(\s+)# (amiId|subnetId|zoneId): /gm, '$1$2: ')
      .replace(/^(\s+)\{\}\n/m, '')
      .replace(/^(\s+)domain: localhost$/m, '$1domain: sandbox.example.com');
    const tmp = join(tmpdir(), `sandbox-kit-dev-${process.pid}.yaml`);
    writeFileSync(tmp, text);
    const file = readStackFile(tmp);
    rmSync(tmp);
    const result = parseStackConfig(file.values);
    expect(result.ok ? [] : result.issues).toEqual([]);
    const present = new Set<string>();
    for (const [top, value] of Object.entries(file.values)) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        for (const k of Object.keys(value)) present.add(`${top}.${k}`);
      else present.add(top);
    }
    const keys = configFields().map((f) => f.path);
    expect(keys.length).toBeGreaterThan(20);
    expect(keys.filter((k) => !present.has(k))).toEqual([]);
  });

  it('matches the project file: the program is infra/ run by the nodejs runtime', () => {
    const project = readFileSync(join(ROOT, 'Pulumi.yaml'), 'utf8');
    expect(project).toMatch(/^name: sandbox-kit$/m);
    expect(project).toMatch(/^main: infra\/$/m);
    expect(project).toMatch(/name: nodejs/);
  });
});
