/**
 * `sandbox-kit mcp list|check|gateway`: the tool-server catalog, config validation, and the in-sandbox gateway.
 */
import * as fs from 'node:fs';
import { loadCatalog } from '../../mcp/catalog/load';
import type { Catalog } from '../../mcp/catalog/schema';
import { formatMcpIssues, validateMcpConfig } from '../../mcp/config/validate';
import { TYPE_WORDS } from '../../mcp/config/server-schema';
import { runMcpGateway } from '../../mcp/gateway/cli';
import { text as textField } from '../../config';
import { parseFlags, switchFlag, UsageError, valueFlag } from '../args';

const file = () => valueFlag(textField(/.+/, 'a file path').optional());

const HELP = `usage: sandbox-kit mcp list [--catalog F] [--json]
       sandbox-kit mcp check (--config JSON | --config-file F) [--catalog F]
       sandbox-kit mcp gateway ...        the in-sandbox gateway (mcp-gateway --help)

list     the catalog's servers: name, description, properties (type, required, secret); never any value
check    validates an mcp config (the \`mcp\` option of Sandbox.create) and lists every problem; exit 0 valid, 1 not
--catalog F adds a larger catalog file to the built-in one (or set $SANDBOX_KIT_MCP_CATALOG).`;

/** How a server runs, in one phrase: `image mcp/time`, `npm @scope/pkg@1.0`, `remote https://...`, `command x`. */
function runsOf(entry: Catalog[string]): string {
  if ('image' in entry.run) return `image ${entry.run.image.ref}`;
  if ('remote' in entry.run) return `remote ${entry.run.remote.url}`;
  if ('npm' in entry.run) return `npm ${entry.run.npm.package}${entry.run.npm.version ? `@${entry.run.npm.version}` : ''}`;
  return `command ${entry.run.command.join(' ')}`;
}

/** The catalog as a user sees it: what each server takes, never how secret values are stored. */
export function describeCatalog(catalog: Catalog) {
  return Object.entries(catalog).map(([name, entry]) => ({
    name,
    description: entry.description,
    aliases: entry.aliases ?? [],
    runs: runsOf(entry),
    properties: Object.entries(entry.properties).map(([prop, p]) => ({
      name: prop,
      type: p.type,
      required: p.required,
      secret: p.secret,
      description: p.description,
    })),
  }));
}

function list(argv: string[]): number {
  const { values } = parseFlags('mcp list', argv, { catalog: file(), json: switchFlag() });
  const servers = describeCatalog(loadCatalog(values.catalog));
  if (values.json) {
    console.log(JSON.stringify(servers, null, 2));
    return 0;
  }
  for (const s of servers) {
    console.log(`${s.name}${s.aliases.length ? ` (also ${s.aliases.join(', ')})` : ''}: ${s.description}`);
    for (const p of s.properties) {
      console.log(
        `  ${p.name}${p.required ? '' : '?'}: ${TYPE_WORDS[p.type]}${p.secret ? ' (secret)' : ''}${p.description ? ` - ${p.description}` : ''}`,
      );
    }
  }
  return 0;
}

function check(argv: string[]): number {
  const { values } = parseFlags('mcp check', argv, {
    config: valueFlag(textField(/.+/, 'a JSON object').optional()),
    'config-file': file(),
    catalog: file(),
  });
  const text = values['config-file'] !== undefined ? fs.readFileSync(values['config-file'], 'utf8') : values.config;
  if (text === undefined) {
    console.error('mcp check: --config JSON or --config-file F is required');
    return 2;
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    console.error(`mcp check: the config is not JSON: ${(err as Error).message}`);
    return 2;
  }
  const result = validateMcpConfig(input, loadCatalog(values.catalog));
  if (!result.ok) {
    console.error(formatMcpIssues(result.issues));
    return 1;
  }
  const names = [...Object.keys(result.config.servers), ...Object.keys(result.config.custom).map((n) => `${n} (custom)`)];
  console.log(`mcp config valid: ${names.join(', ') || 'no servers'}`);
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === 'list') return list(rest);
    if (sub === 'check') return check(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`sandbox-kit ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (sub === 'gateway') return runMcpGateway(rest, [process.execPath, ...process.execArgv, process.argv[1], 'mcp', 'gateway']);
  if (sub === '--help' || sub === '-h') {
    console.log(HELP);
    return 0;
  }
  console.error(
    `sandbox-kit mcp: ${sub === undefined ? 'a subcommand is needed' : `unknown subcommand ${JSON.stringify(sub)}`}\n\n${HELP}`,
  );
  return 2;
}
