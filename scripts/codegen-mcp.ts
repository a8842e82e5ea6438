/**
 * Writes the TypeScript types of the MCP catalog.
 *   node dist/scripts/codegen-mcp.js [--catalog FILE] [--out FILE]
 * Without flags: the built-in catalog (templates/mcp/catalog.json) into src/mcp/generated/servers.ts, the file the
 * kit compiles against. With --catalog, the types of a larger catalog, for code that uses it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { builtinCatalog, readCatalogFile } from '../src/mcp/catalog/load';
import { renderCatalogTypes } from '../src/mcp/catalog/render-types';

export const GENERATED_TYPES = 'src/mcp/generated/servers.ts';
export const BUILTIN_SOURCE = 'templates/mcp/catalog.json';

function main(): number {
  let values: { catalog?: string; out?: string };
  try {
    ({ values } = parseArgs({ options: { catalog: { type: 'string' }, out: { type: 'string' } }, strict: true }));
  } catch (err) {
    console.error(`codegen-mcp: ${(err as Error).message} (options: --catalog FILE, --out FILE)`);
    return 2;
  }
  const root = path.resolve(__dirname, '..', '..');
  const catalog = values.catalog === undefined ? builtinCatalog() : readCatalogFile(values.catalog);
  const source = values.catalog === undefined ? BUILTIN_SOURCE : path.basename(values.catalog);
  const out = values.out ?? path.join(root, GENERATED_TYPES);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, renderCatalogTypes(catalog, source));
  console.log(`codegen-mcp: ${Object.keys(catalog).length} servers -> ${out}`);
  return 0;
}

if (require.main === module) {
  try {
    process.exitCode = main();
  } catch (err) {
    console.error(`codegen-mcp: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
