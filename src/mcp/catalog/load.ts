import * as fs from 'node:fs';
import builtinJson from '../../../templates/mcp/catalog.json';
import { type Catalog, catalogSchema } from './schema';

/** The env var naming a larger catalog file whose entries are added to (and override) the built-in ones. */
export const CATALOG_FILE_ENV = 'SANDBOX_KIT_MCP_CATALOG';

export class CatalogError extends Error {
  constructor(source: string, problems: string[]) {
    super(
      `invalid MCP catalog ${source} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'CatalogError';
  }
}

/** Validates a catalog document; `source` names it in errors (a file path, or "built-in"). */
export function parseCatalog(doc: unknown, source: string): Catalog {
  const result = catalogSchema.safeParse(doc);
  if (result.success) return result.data;
  throw new CatalogError(
    source,
    result.error.issues.map((i) => {
      const where = i.path.map(String).join('.') || '(document)';
      // A bad server name: say what is wrong with the name itself, not just "Invalid key".
      const message = i.code === 'invalid_key' ? i.issues.map((k) => k.message).join('; ') : i.message;
      return `${where}: ${message}`;
    }),
  );
}

let builtin: Catalog | undefined;

/** The catalog shipped with the kit (templates/mcp/catalog.json): the reference servers. */
export function builtinCatalog(): Catalog {
  builtin ??= parseCatalog(builtinJson, 'built-in (templates/mcp/catalog.json)');
  return builtin;
}

/** Reads a catalog file (JSON) and validates it. */
export function readCatalogFile(file: string): Catalog {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CatalogError(file, [(err as Error).message]);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(file, [`not JSON: ${(err as Error).message}`]);
  }
  return parseCatalog(doc, file);
}

/**
 * The catalog in effect: the built-in entries plus those of `file` (or of $SANDBOX_KIT_MCP_CATALOG), the file's
 * entries winning on a name clash.
 */
export function loadCatalog(file: string | undefined = process.env[CATALOG_FILE_ENV] || undefined): Catalog {
  if (file === undefined) return builtinCatalog();
  return { ...builtinCatalog(), ...readCatalogFile(file) };
}
