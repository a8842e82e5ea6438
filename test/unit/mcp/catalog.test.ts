import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { builtinCatalog, CatalogError, loadCatalog, parseCatalog } from '../../../src/mcp/catalog/load';

const entry = { description: 'A server.', run: { command: ['srv'] } };

describe('the catalog document', () => {
  test('the built-in catalog holds the reference servers, each runnable from npm, in place of the public entries of their names', () => {
    const catalog = builtinCatalog();
    for (const name of ['everything', 'filesystem', 'memory', 'sequentialThinking']) expect('npm' in catalog[name].run).toBe(true);
    expect(catalog.filesystem.properties.paths).toMatchObject({ type: 'string[]', required: true, via: { kind: 'args' } });
    // The SDK's spelling of sequential thinking is the kit's alias, not a second entry.
    expect(catalog.sequentialthinking).toBeUndefined();
    expect(catalog.sequentialThinking.aliases).toContain('sequentialthinking');
  });

  test('a secret property may not travel in argv', () => {
    const doc = {
      vault: { ...entry, properties: { token: { type: 'string', required: true, secret: true, via: { kind: 'flag', flag: '--token' } } } },
    };
    expect(() => parseCatalog(doc, 'test.json')).toThrow(
      /vault\.properties\.token\.via: a secret property must reach the server by env or file, never argv/,
    );
  });

  test('names must be camelCase, `custom` is reserved, types are the known ones, file delivery needs configFile', () => {
    let message = '';
    try {
      parseCatalog(
        {
          'Bad-Name': entry,
          custom: entry,
          typed: { ...entry, properties: { port: { type: 'integer', required: false, via: { kind: 'env', name: 'PORT' } } } },
          filed: { ...entry, properties: { url: { type: 'string', required: false, via: { kind: 'file', key: 'url' } } } },
        },
        'test.json',
      );
    } catch (err) {
      expect(err).toBeInstanceOf(CatalogError);
      message = (err as Error).message;
    }
    expect(message).toContain('invalid MCP catalog test.json');
    expect(message).toContain('Bad-Name');
    expect(message).toContain('"custom" is reserved');
    expect(message).toContain('typed.properties.port.type');
    expect(message).toContain('filed.properties.url.via: a file property needs the entry to declare configFile');
  });

  test('a catalog file adds to the built-in entries and may override them', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-cat-'));
    try {
      const file = path.join(dir, 'catalog.json');
      fs.writeFileSync(file, JSON.stringify({ extra: entry, memory: { ...entry, description: 'Overridden.' } }));
      const catalog = loadCatalog(file);
      expect(catalog.extra.description).toBe('A server.');
      expect(catalog.memory.description).toBe('Overridden.');
      expect(catalog.filesystem).toBe(builtinCatalog().filesystem);
      fs.writeFileSync(file, '{ not json');
      expect(() => loadCatalog(file)).toThrow(/not JSON/);
      expect(() => loadCatalog(path.join(dir, 'missing.json'))).toThrow(/ENOENT/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
