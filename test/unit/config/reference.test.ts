import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configFields, keysAt, loadStackConfig, NOT_YET_READ_KEYS, renderConfigReference } from '../../../src/config';
import { withConfigTable } from '../../../src/config/reference';

describe('config reference (docs/config.md)', () => {
  it('is up to date with the schema (regenerate: npm run build && node dist/scripts/config-reference.js)', () => {
    const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'config.md'), 'utf8');
    expect(doc).toBe(renderConfigReference());
  });

  it('the README carries the same generated table (regenerate: npm run docs:config)', () => {
    const readme = readFileSync(join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    expect(readme).toBe(withConfigTable(readme));
  });

  it('documents every settable key, with a description and what it accepts', () => {
    const fields = configFields();
    const documented = new Set(fields.map((f) => f.path));
    for (const section of keysAt([]) ?? []) {
      const keys = keysAt([section]);
      for (const key of keys ?? [section]) expect(documented).toContain(keys ? `${section}.${key}` : section);
    }
    for (const field of fields) {
      expect({ path: field.path, described: field.description.length > 0 }).toEqual({ path: field.path, described: true });
      expect(field.accepts).not.toMatch(/^(string|number|union|pipe|array|object)$/);
    }
  });

  it('shows the defaults the schema applies', () => {
    const config = loadStackConfig({}) as unknown as Record<string, Record<string, unknown>>;
    for (const field of configFields().filter((f) => f.hasDefault)) {
      const [section, key] = field.path.split('.');
      const applied = key === undefined ? config[section] : config[section][key];
      expect({ path: field.path, value: applied }).toEqual({ path: field.path, value: field.defaultValue });
    }
  });
});

describe('keys nothing reads yet', () => {
  it('are real keys, and the reference marks each of them, and only them', () => {
    const table = renderConfigReference();
    const paths = configFields().map((f) => f.path);
    for (const key of NOT_YET_READ_KEYS) expect(paths).toContain(key);
    const marked = table
      .split('\n')
      .filter((l) => l.includes('**Not read yet**'))
      .map((l) => /`sandbox-kit:([^`]+)`/.exec(l)![1]);
    expect(marked.sort()).toEqual([...NOT_YET_READ_KEYS].sort());
  });
});
