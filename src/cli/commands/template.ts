/**
 * `sandbox-kit template build`: builds the stack's proxy template, the mcp-gateway or the code-interpreter-v1 template, through an
 * E2B-compatible API (the kit's platform or any other) with the E2B SDK, printing the build's logs as they come.
 * Thin: flags and the stack in, templates/proxy or templates/mcp-gateway out.
 */
import { readFileSync } from 'node:fs';
import type { LogEntry } from 'e2b';
import { buildCodeInterpreterTemplate, CODE_INTERPRETER_SETTINGS } from '../../../templates/code-interpreter/template';
import { buildMcpGatewayTemplate, MCP_GATEWAY_TEMPLATE } from '../../../templates/mcp-gateway';
import { buildProxyTemplate } from '../../../templates/proxy';
import { CLIENT_MODES, type ClientMode, type ConfigIssue, formatIssues, ipv4, oneOf, text } from '../../config';
import { loadCatalog } from '../../mcp/catalog/load';
import { listFlag, parseFlags, requiredFlag, switchFlag, valueFlag } from '../args';
import { DEFAULT_STACK, loadStack, PASSWORD_ENV, requiredPasswordFromEnv, stackName } from '../stack';
import { parseApiKeyFile } from '../../platform/teams/api-keys';

const USAGE = `usage: sandbox-kit template build [--stack NAME] [--mode local|transparent] --server-ip IP
                                [--api-url URL] [--api-key-file FILE] [--alias NAME] [--skip-cache]
       sandbox-kit template build --template mcp-gateway [--server NAME ...] [--extra-ca-certs FILE]
                                [--api-url URL] [--api-key-file FILE] [--alias NAME] [--skip-cache]
       sandbox-kit template build --template code-interpreter-v1 [--extra-ca-certs FILE]
                                [--api-url URL] [--api-key-file FILE] [--alias NAME] [--skip-cache]

Builds the proxy client template of a stack (default stack: ${DEFAULT_STACK}) with the E2B SDK's Template.build, using
the stack's template alias, memoryMB and cpuCount, and prints the build logs live. With --template mcp-gateway it
builds the template Sandbox.create({ mcp }) starts from, with the catalog's npm servers preinstalled
(alias ${MCP_GATEWAY_TEMPLATE.alias}, ${MCP_GATEWAY_TEMPLATE.memoryMB} MB, ${MCP_GATEWAY_TEMPLATE.cpuCount} CPU). With --template
code-interpreter-v1 it builds the template @e2b/code-interpreter starts from (${CODE_INTERPRETER_SETTINGS.memoryMB} MB, ${CODE_INTERPRETER_SETTINGS.cpuCount} CPU).

  --template NAME      proxy (default), mcp-gateway or code-interpreter-v1
  --mode MODE          local (ss-local, SOCKS5 on 1080) or transparent (ss-redir + NAT chain + ss-local);
                       default: the stack's template.mode
  --server-ip IP       the proxy's public (ingress) address the client dials; required
  --api-url URL        the platform API; default: E2B_API_URL, else the SDK's default
  --api-key-file FILE  a file holding the API key; default: E2B_API_KEY
  --alias NAME         build under another name than the stack's template.alias
  --skip-cache         rebuild every step
  --server NAME        mcp-gateway: preinstall only these catalog servers (repeatable; default: every npm server of
                       the catalog, with those of the SANDBOX_KIT_MCP_CATALOG file added); an image server's image is
                       fetched by the kit's template builder into the template, so its sandboxes need no pull
  --extra-ca-certs F   mcp-gateway, code-interpreter-v1: a PEM file of certificates the template trusts besides
                       Debian's (a TLS-inspecting proxy between the build or the sandbox and the internet)

The proxy password comes from ${PASSWORD_ENV}; it is written only into the template's 0600 client config.`;

const LEVEL: Record<string, string> = { debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR' };

function printLog(e: LogEntry): void {
  const time = e.timestamp.toISOString().slice(11, 19);
  process.stdout.write(`${time} ${LEVEL[e.level] ?? e.level} ${e.message}\n`);
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'build') {
    console.error(`template: unknown subcommand ${JSON.stringify(sub)}; expected build\n\n${USAGE}`);
    return 2;
  }
  // The flags depend on the template: the proxy's need its server, the mcp-gateway's name its servers.
  const named = (t: string) => rest.some((a, i) => a === `--template=${t}` || (a === '--template' && rest[i + 1] === t));
  const mcp = named('mcp-gateway');
  const common = {
    template: valueFlag(oneOf(['proxy', 'mcp-gateway', CODE_INTERPRETER_SETTINGS.alias]).default('proxy')),
    'api-url': valueFlag(text(/^https?:\/\/[^\s/]+/, 'an http(s) URL such as http://127.0.0.1:3000').optional()),
    'api-key-file': valueFlag(text(/.+/, 'a file path').optional()),
    alias: valueFlag(text(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _, at most 63 characters').optional()),
    'skip-cache': switchFlag(),
  };
  if (named(CODE_INTERPRETER_SETTINGS.alias)) {
    const { values, help } = parseFlags('template build', rest, {
      ...common,
      'extra-ca-certs': valueFlag(text(/.+/, 'a file path').optional()),
    });
    if (help) {
      console.log(USAGE);
      return 0;
    }
    return buildCodeInterpreter(values);
  }
  if (mcp) {
    const { values, help } = parseFlags('template build', rest, {
      ...common,
      server: listFlag(text(/^[A-Za-z][A-Za-z0-9]*$/, "a catalog server's camelCase name, such as filesystem")),
      'extra-ca-certs': valueFlag(text(/.+/, 'a file path').optional()),
    });
    if (help) {
      console.log(USAGE);
      return 0;
    }
    return buildMcp(values);
  }
  const { values, help } = parseFlags('template build', rest, {
    ...common,
    stack: valueFlag(stackName().default(DEFAULT_STACK)),
    mode: valueFlag(oneOf(CLIENT_MODES).optional()),
    'server-ip': requiredFlag(ipv4(), "the proxy's public IPv4 address that clients dial, such as 203.0.113.10"),
  });
  if (help) {
    console.log(USAGE);
    return 0;
  }

  const serverIp = values['server-ip'];
  const connection = readConnection(values);
  if (typeof connection === 'number') return connection;
  const { apiUrl, apiKey } = connection;

  const loaded = loadStack(values.stack);
  const env = requiredPasswordFromEnv();
  const issues = [...loaded.issues, ...env.issues];
  if (issues.length > 0 || !loaded.config || env.password === undefined || serverIp === undefined) {
    console.error(`template build: stack ${loaded.stack} (${loaded.path}): ${formatIssues(issues)}\nNothing was built.`);
    return 1;
  }

  const mode = (values.mode ?? loaded.config.template.mode) as ClientMode;
  const alias = values.alias ?? loaded.config.template.alias;
  console.log(
    `template build: ${alias} (${mode} mode, ${loaded.config.template.cpuCount} CPU, ${loaded.config.template.memoryMB} MB) from stack ${loaded.stack} via ${apiUrl ?? 'the SDK default API'}`,
  );
  try {
    const info = await buildProxyTemplate({
      config: loaded.config,
      target: { serverIp, password: env.password },
      mode,
      alias,
      apiUrl,
      apiKey,
      skipCache: values['skip-cache'],
      onBuildLogs: printLog,
    });
    console.log(`template build: ${info.name} is ready: templateID ${info.templateId}, buildID ${info.buildId}`);
    return 0;
  } catch (err) {
    console.error(`template build: ${alias} failed: ${(err as Error).message}`);
    return 1;
  }
}

interface ConnectionFlags {
  'api-url'?: string;
  'api-key-file'?: string;
}

/** The API URL and key from the flags or E2B_API_URL / E2B_API_KEY; every problem at once, or exit code 2. */
function readConnection(values: ConnectionFlags): { apiUrl?: string; apiKey?: string } | number {
  const usageIssues: ConfigIssue[] = [];
  const apiUrl = values['api-url'] ?? process.env.E2B_API_URL;
  if (apiUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(apiUrl)) {
    usageIssues.push({
      key: values['api-url'] !== undefined ? '--api-url' : 'E2B_API_URL',
      given: JSON.stringify(apiUrl),
      expected: 'an http(s) URL such as http://127.0.0.1:3000',
    });
  }
  let apiKey: string | undefined;
  const keyFile = values['api-key-file'];
  if (keyFile !== undefined) {
    try {
      // The first key: a platform's key file lists the key it hands out first, keys still accepted below it.
      apiKey = parseApiKeyFile(readFileSync(keyFile, 'utf8'), keyFile)[0];
    } catch (err) {
      usageIssues.push({
        key: '--api-key-file',
        given: keyFile,
        expected: `a readable file holding the API key (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      });
    }
  } else {
    apiKey = process.env.E2B_API_KEY;
    if (!apiKey)
      usageIssues.push({
        key: '--api-key-file',
        given: '(missing, and E2B_API_KEY is not set)',
        expected: 'a file holding the platform API key, or E2B_API_KEY',
      });
  }
  if (usageIssues.length > 0) {
    console.error(`template build: ${formatIssues(usageIssues)}\nNothing was built.`);
    return 2;
  }
  return { apiUrl, apiKey };
}

/** `--template mcp-gateway`: the catalog's servers checked before anything is sent. */
async function buildMcp(
  values: ConnectionFlags & { server: string[]; 'extra-ca-certs'?: string; alias?: string; 'skip-cache': boolean },
): Promise<number> {
  const connection = readConnection(values);
  if (typeof connection === 'number') return connection;
  let catalog: ReturnType<typeof loadCatalog>;
  try {
    catalog = loadCatalog();
  } catch (err) {
    console.error(`template build: ${(err as Error).message}\nNothing was built.`);
    return 1;
  }
  const npmServers = Object.keys(catalog).filter((name) => 'npm' in catalog[name]!.run);
  const installable = (name: string) => catalog[name] !== undefined && ('npm' in catalog[name].run || 'image' in catalog[name].run);
  const unknown = values.server.filter((name) => !installable(name));
  if (unknown.length > 0) {
    const issues = unknown.map((name) => ({
      key: '--server',
      given: JSON.stringify(name),
      expected:
        catalog[name] === undefined
          ? `a catalog server run from npm or an image (sandbox-kit mcp list shows them), such as ${npmServers.join(', ')}`
          : 'a catalog server run from npm or an image: this one needs nothing installed',
    }));
    console.error(`template build: ${formatIssues(issues)}\nNothing was built.`);
    return 2;
  }
  const alias = values.alias ?? MCP_GATEWAY_TEMPLATE.alias;
  const servers = values.server.length > 0 ? values.server : npmServers;
  console.log(`template build: ${alias} with ${servers.join(', ')} via ${connection.apiUrl ?? 'the SDK default API'}`);
  try {
    const info = await buildMcpGatewayTemplate(
      { ...connection, alias, skipCache: values['skip-cache'], onBuildLogs: printLog },
      { catalog, servers, ...(values['extra-ca-certs'] ? { extraCaCertsFile: values['extra-ca-certs'] } : {}) },
    );
    console.log(`template build: ${info.name} is ready: templateID ${info.templateId}, buildID ${info.buildId}`);
    return 0;
  } catch (err) {
    console.error(`template build: ${alias} failed: ${(err as Error).message}`);
    return 1;
  }
}

/** `--template code-interpreter-v1`: Debian's Jupyter kernel and data libraries; the server comes with the payload. */
async function buildCodeInterpreter(
  values: ConnectionFlags & { 'extra-ca-certs'?: string; alias?: string; 'skip-cache': boolean },
): Promise<number> {
  const connection = readConnection(values);
  if (typeof connection === 'number') return connection;
  const alias = values.alias ?? CODE_INTERPRETER_SETTINGS.alias;
  console.log(`template build: ${alias} via ${connection.apiUrl ?? 'the SDK default API'}`);
  try {
    const info = await buildCodeInterpreterTemplate(
      { ...connection, alias, skipCache: values['skip-cache'], onBuildLogs: printLog },
      values['extra-ca-certs'] ? { extraCaCertsFile: values['extra-ca-certs'] } : {},
    );
    console.log(`template build: ${info.name} is ready: templateID ${info.templateId}, buildID ${info.buildId}`);
    return 0;
  } catch (err) {
    console.error(`template build: ${alias} failed: ${(err as Error).message}`);
    return 1;
  }
}
