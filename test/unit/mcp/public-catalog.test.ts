import { builtinCatalog } from '../../../src/mcp/catalog/load';
import type { CatalogEntry, PropertyType } from '../../../src/mcp/catalog/schema';
import { parseMcpConfig, validateMcpConfig } from '../../../src/mcp/config/validate';
import { readSdkServers } from '../../../scripts/mcp-catalog/sdk-servers';

const catalog = builtinCatalog();
const sdk = readSdkServers();

/** A value of each type, and one of the wrong type. */
const GOOD: Record<PropertyType, unknown> = { string: 'v', number: 3, boolean: true, 'string[]': ['a', 'b'], 'string|number': 5432 };
const BAD: Record<PropertyType, unknown> = { string: 7, number: 'three', boolean: 'yes', 'string[]': 'a,b', 'string|number': true };

function validConfig(entry: CatalogEntry, all = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(entry.properties)) if (p.required || all) out[name] = GOOD[p.type];
  return out;
}

const entryOf = (name: string) => catalog[name] ?? Object.values(catalog).find((e) => e.aliases?.includes(name));

describe('the public catalog in the built-in one', () => {
  test('every server the SDK types is in it, with the SDK’s properties, types and required flags', () => {
    expect(Object.keys(sdk).length).toBeGreaterThan(200);
    for (const [name, props] of Object.entries(sdk)) {
      const entry = entryOf(name);
      expect(entry).toBeDefined();
      if (entry === undefined) continue;
      for (const [prop, p] of Object.entries(props)) {
        const mine = entry.properties[prop];
        expect([name, prop, mine?.required]).toEqual([name, prop, p.required]);
        // A port may be written either way; every other type is the SDK's own.
        expect([name, prop, mine?.type === 'string|number' ? 'number' : mine?.type]).toEqual([name, prop, p.type]);
      }
      // The kit's own entries (run from npm) may take more; the public ones take exactly the SDK's.
      if (!('npm' in entry.run)) expect(Object.keys(entry.properties).sort()).toEqual(Object.keys(props).sort());
    }
  });

  test('each entry runs from an OCI image, a vendor URL or npm, and a secret never travels in argv', () => {
    const kinds = { image: 0, remote: 0, npm: 0 };
    for (const entry of Object.values(catalog)) {
      if ('image' in entry.run) kinds.image++;
      else if ('remote' in entry.run) kinds.remote++;
      else if ('npm' in entry.run) kinds.npm++;
      if ('image' in entry.run) {
        for (const [prop, p] of Object.entries(entry.properties)) {
          if (p.secret) expect(entry.run.image.args.join(' ')).not.toContain(`{{${prop}`);
        }
      }
    }
    expect(kinds.image).toBeGreaterThan(200);
    expect(kinds.remote).toBeGreaterThan(10);
    expect(kinds.npm).toBe(4);
    expect(catalog.airtable.run).toMatchObject({ image: { ref: 'mcp/airtable-mcp-server' } });
    expect(catalog.airtable.properties.airtableApiKey).toMatchObject({ secret: true, via: { kind: 'env', name: 'AIRTABLE_API_KEY' } });
  });

  test('a valid configuration of every entry validates, all in one config', () => {
    const config: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(catalog)) config[name] = validConfig(entry, true);
    const result = validateMcpConfig(config, catalog);
    expect(result.ok ? [] : result.issues).toEqual([]);
  });

  test('a wrong type and a missing required key are named, for entries of every property type, with secrets hidden', () => {
    for (const type of ['string', 'number', 'boolean', 'string[]', 'string|number'] as PropertyType[]) {
      const found = Object.entries(catalog).find(
        ([, e]) =>
          !('npm' in e.run) &&
          Object.values(e.properties).some((p) => p.type === type) &&
          Object.values(e.properties).some((p) => p.required),
      );
      expect([type, found !== undefined]).toEqual([type, true]);
      if (found === undefined) continue;
      const [name, entry] = found;
      const [prop, p] = Object.entries(entry.properties).find(([, q]) => q.type === type) as [string, CatalogEntry['properties'][string]];
      const [missing] = Object.entries(entry.properties).find(([n, q]) => q.required && n !== prop) ?? [undefined];
      const config: Record<string, unknown> = { ...validConfig(entry), [prop]: BAD[type] };
      if (missing !== undefined) delete config[missing];
      const result = validateMcpConfig({ [name]: config }, catalog);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      const byKey = new Map(result.issues.map((i) => [i.key, i]));
      expect(byKey.get(`mcp.${name}.${prop}`)).toMatchObject({
        server: name,
        given: p.secret ? '(secret, not shown)' : expect.any(String),
      });
      if (missing !== undefined) expect(byKey.get(`mcp.${name}.${missing}`)?.expected).toContain('(required)');
    }
  });

  test('a secret given with the wrong type is never echoed', () => {
    const result = validateMcpConfig({ airtable: { airtableApiKey: ['pat-SECRET-123'], nodeenv: 'production' } }, catalog);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      { key: 'mcp.airtable.airtableApiKey', server: 'airtable', given: '(secret, not shown)', expected: 'a string' },
    ]);
    expect(JSON.stringify(result.issues)).not.toContain('pat-SECRET-123');
  });

  test('the reference servers still take their SDK configuration (sequentialthinking by the SDK’s spelling)', () => {
    const config = parseMcpConfig({ filesystem: { paths: ['/home/user'] }, memory: {}, sequentialthinking: {}, time: {} }, catalog);
    expect(Object.keys(config.servers).sort()).toEqual(['filesystem', 'memory', 'sequentialThinking', 'time']);
  });
});
