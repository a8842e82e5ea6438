import type { Catalog, CatalogEntry, PropertyType } from './schema';

/**
 * Renders the TypeScript types of a catalog: one interface per server and `McpServers`, the map of them all, so a
 * config literal such as `{ filesystem: { paths: ['/home/user'] } }` is checked by the compiler. Pure: the codegen
 * script writes the result, and a test compares it with the committed file.
 */

const TS_TYPE: Record<PropertyType, string> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  'string[]': 'string[]',
  'string|number': 'string | number',
};

export function interfaceName(server: string): string {
  return `${server[0].toUpperCase()}${server.slice(1)}Config`;
}

function comment(text: string, indent: string): string {
  return `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n`;
}

function renderEntry(name: string, entry: CatalogEntry): string {
  const props = Object.entries(entry.properties);
  let out = comment(entry.description, '');
  if (props.length === 0) return `${out}export type ${interfaceName(name)} = Record<string, never>;\n`;
  out += `export interface ${interfaceName(name)} {\n`;
  for (const [prop, p] of props) {
    const notes = [p.description, p.secret ? 'Secret: passed by env or a 0600 file, never shown.' : undefined].filter(Boolean).join(' ');
    if (notes) out += comment(notes, '  ');
    out += `  ${prop}${p.required ? '' : '?'}: ${TS_TYPE[p.type]};\n`;
  }
  return `${out}}\n`;
}

export function renderCatalogTypes(catalog: Catalog, source: string): string {
  const names = Object.keys(catalog).sort();
  let out = `// Generated from ${source} by scripts/codegen-mcp.ts: do not edit; run the codegen after changing the catalog.\n\n`;
  for (const name of names) out += `${renderEntry(name, catalog[name])}\n`;
  out += '/** Every catalog server, by name: the `mcp` option of a sandbox or template. */\nexport interface McpServers {\n';
  for (const name of names) {
    out += comment(catalog[name].description, '  ');
    out += `  ${name}?: ${interfaceName(name)};\n`;
    for (const alias of catalog[name].aliases ?? []) {
      out += comment(`Another name for ${name}.`, '  ');
      out += `  ${alias}?: ${interfaceName(name)};\n`;
    }
  }
  return `${out}}\n`;
}
