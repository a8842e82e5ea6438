import * as fs from 'node:fs';
import * as path from 'node:path';
import { builtinCatalog, parseCatalog } from '../../../src/mcp/catalog/load';
import { renderCatalogTypes } from '../../../src/mcp/catalog/render-types';
import { PUBLIC_CATALOG, renderPublicCatalog, TYPES_SOURCE } from '../../../scripts/codegen-mcp';

const REPO = path.resolve(__dirname, '..', '..', '..');

describe('generated catalog types', () => {
  test('src/mcp/generated/servers.ts is what the codegen makes of the built-in catalog (run `npm run codegen` when this fails)', () => {
    const committed = fs.readFileSync(path.join(REPO, 'src/mcp/generated/servers.ts'), 'utf8');
    expect(committed).toBe(renderCatalogTypes(builtinCatalog(), TYPES_SOURCE));
  });

  test('templates/mcp/public-catalog.json is what the codegen makes of the installed SDK and the facts file (run `npm run codegen` when this fails)', () => {
    const committed = fs.readFileSync(path.join(REPO, PUBLIC_CATALOG), 'utf8');
    expect(committed).toBe(renderPublicCatalog(REPO));
  });

  test('optional, required, secret and string-or-number properties render as TypeScript says them', () => {
    const catalog = parseCatalog(
      {
        someDb: {
          description: 'A database server.',
          run: { command: ['db-mcp'] },
          properties: {
            host: { type: 'string', required: true, via: { kind: 'flag', flag: '--host' } },
            port: { type: 'string|number', required: false, via: { kind: 'flag', flag: '--port' } },
            password: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'DB_PASSWORD' } },
          },
        },
      },
      'db.json',
    );
    const out = renderCatalogTypes(catalog, 'db.json');
    expect(out).toContain('export interface SomeDbConfig {\n  host: string;\n  port?: string | number;\n');
    expect(out).toContain('Secret: passed by env or a 0600 file, never shown. */\n  password: string;');
    expect(out).toContain('  someDb?: SomeDbConfig;');
  });
});
