/**
 * Writes the public catalog and the TypeScript types of the MCP catalog.
 *   node dist/scripts/codegen-mcp.js [--catalog FILE] [--out FILE]
 * Without flags (what `npm run codegen` runs): templates/mcp/public-catalog.json from the installed E2B SDK's
 * `McpServer` type (names, property types, required flags) and templates/mcp/public-facts.json (images, remote URLs,
 * arguments, env, secrets), then the types of the built-in catalog (that one and templates/mcp/catalog.json) into
 * src/mcp/generated/servers.ts, the file the kit compiles against. With --catalog, the types of a larger catalog.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { mergeBuiltin, parseCatalog, readCatalogFile } from '../src/mcp/catalog/load';
import { renderCatalogTypes } from '../src/mcp/catalog/render-types';
import { buildPublicCatalog } from './mcp-catalog/build-catalog';
import type { FactsFile } from './mcp-catalog/facts';
import { readSdkServers } from './mcp-catalog/sdk-servers';

export const GENERATED_TYPES = 'src/mcp/generated/servers.ts';
export const BUILTIN_SOURCE = 'templates/mcp/catalog.json';
export const PUBLIC_FACTS = 'templates/mcp/public-facts.json';
export const PUBLIC_CATALOG = 'templates/mcp/public-catalog.json';
export const TYPES_SOURCE = `${PUBLIC_CATALOG} and ${BUILTIN_SOURCE}`;

/** The public catalog document as the codegen writes it. */
export function renderPublicCatalog(root: string): string {
  const facts = JSON.parse(fs.readFileSync(path.join(root, PUBLIC_FACTS), 'utf8')) as FactsFile;
  return `${JSON.stringify(buildPublicCatalog(readSdkServers(), facts), null, 2)}\n`;
}

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function main(): number {
  let values: { catalog?: string; out?: string };
  try {
    ({ values } = parseArgs({ options: { catalog: { type: 'string' }, out: { type: 'string' } }, strict: true }));
  } catch (err) {
    console.error(`codegen-mcp: ${(err as Error).message} (options: --catalog FILE, --out FILE)`);
    return 2;
  }
  const root = path.resolve(__dirname, '..', '..');
  const out = values.out ?? path.join(root, GENERATED_TYPES);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  if (values.catalog !== undefined) {
    const catalog = readCatalogFile(values.catalog);
    fs.writeFileSync(out, renderCatalogTypes(catalog, path.basename(values.catalog)));
    console.log(`codegen-mcp: ${Object.keys(catalog).length} servers -> ${out}`);
    return 0;
  }
  const publicText = renderPublicCatalog(root);
  fs.writeFileSync(path.join(root, PUBLIC_CATALOG), publicText);
  const catalog = mergeBuiltin(
    parseCatalog(JSON.parse(publicText), PUBLIC_CATALOG),
    parseCatalog(readJson(path.join(root, BUILTIN_SOURCE)), BUILTIN_SOURCE),
  );
  fs.writeFileSync(out, renderCatalogTypes(catalog, TYPES_SOURCE));
  console.log(
    `codegen-mcp: ${Object.keys(JSON.parse(publicText)).length} public servers -> ${PUBLIC_CATALOG}; ${Object.keys(catalog).length} servers -> ${out}`,
  );
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
