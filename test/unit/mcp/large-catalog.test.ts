import { parseCatalog } from '../../../src/mcp/catalog/load';
import { renderCatalogTypes } from '../../../src/mcp/catalog/render-types';
import { validateMcpConfig } from '../../../src/mcp/config/validate';
import { syntheticCatalog, syntheticConfig } from '../../../scripts/bench/mcp-synthetic-catalog';

describe('a catalog of 250 entries', () => {
  const catalog = parseCatalog(syntheticCatalog(250), 'synthetic');

  test('loads, and configs for any of its servers validate', () => {
    expect(Object.keys(catalog)).toHaveLength(250);
    const config: Record<string, unknown> = {};
    for (const i of [0, 1, 2, 3, 4, 120, 249]) config[`server${i}Tool`] = syntheticConfig(i);
    const result = validateMcpConfig(config, catalog);
    expect(result.ok).toBe(true);
  });

  test('mistakes are still named precisely, with the nearest server name', () => {
    const result = validateMcpConfig({ server12tool: {}, server1Tool: { host: 'db', prot: 1 } }, catalog);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => [i.key, i.expected])).toEqual([
      ['mcp.server12tool', expect.stringContaining('a server of the catalog or custom')],
      ['mcp.server1Tool.password', 'a string (required)'],
      ['mcp.server1Tool.prot', expect.stringContaining('no such property (did you mean port?')],
    ]);
    expect(result.issues[0].expected).toContain('did you mean server12Tool?');
    expect(result.issues[0].expected).toContain('250 servers known');
  });

  test('renders types for every entry', () => {
    const out = renderCatalogTypes(catalog, 'synthetic');
    expect(out.match(/^ {2}server\d+Tool\?: /gm)).toHaveLength(250);
  });
});
