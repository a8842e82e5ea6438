import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { MCP_GATEWAY_PORT, MCP_TOKEN_ENV, MCP_TOKEN_FILE } from '../../contract/mcp';
import { loadCatalog } from '../catalog/load';
import type { Catalog } from '../catalog/schema';
import { formatMcpIssues, validateMcpConfig, type ValidMcpConfig } from '../config/validate';
import { DEFAULT_IMAGES_DIRS } from '../launch/image-dir';
import { DEFAULT_SERVERS_DIR } from '../launch/resolve-bin';
import { pullServers } from './pull';
import { type GatewayStatus, startMcpGateway } from './server';
import { DEFAULT_STATE_DIR, type DaemonFile, readDaemonFile, removeDaemonFile, writeDaemonFile } from './daemon-file';
import { readTokenFile, writeTokenFile } from './token-file';
import { sleep } from '../../util/poll';

const HELP = `usage: mcp-gateway --config JSON [options]     start the gateway in the background, wait until it serves
       mcp-gateway serve --config-file F [options]  run the gateway in the foreground
       mcp-gateway pull SERVER...                  install catalog servers (npm) into the servers dir
       mcp-gateway status                          print every server's state
       mcp-gateway restart [--state-dir D]         start the launched gateway again after its processes ended
                                                   (a resume from disk, a sandbox made from a snapshot); no-op
                                                   when none was launched or it still answers

Launches the configured MCP servers over stdio and serves all their tools, named <server>__<tool>, over Streamable
HTTP at http://0.0.0.0:${MCP_GATEWAY_PORT}/mcp behind Authorization: Bearer <token>. The token is $${MCP_TOKEN_ENV} (a
random one when unset), written to the token file (0600).

options:
  --config JSON        the servers: {"filesystem":{"paths":["/home/user"]},"memory":{},"custom":{"x":{"runCmd":"..."}}}
  --config-file F      the same, read from a file
  --port N             port (default ${MCP_GATEWAY_PORT})
  --host ADDR          address (default 0.0.0.0)
  --token-file F       where the token is written (default ${MCP_TOKEN_FILE})
  --state-dir D        private dir for logs, per-server dirs and config files (default ${DEFAULT_STATE_DIR})
  --servers-dir D      dir whose node_modules holds the npm servers (default ${DEFAULT_SERVERS_DIR}); repeatable
  --images-dir D       dir holding the image servers' filesystems (default ${DEFAULT_IMAGES_DIRS.join(', ')}); repeatable
  --catalog F          a larger catalog file, added to the built-in one (or $SANDBOX_KIT_MCP_CATALOG)
  --wait-ms N          how long the launcher waits for the servers (default 50000)`;

const OPTIONS = {
  config: { type: 'string' },
  'config-file': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'token-file': { type: 'string' },
  'state-dir': { type: 'string' },
  'servers-dir': { type: 'string', multiple: true },
  'images-dir': { type: 'string', multiple: true },
  catalog: { type: 'string' },
  'wait-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(
      `${(err as Error).message} (options: ${Object.keys(OPTIONS)
        .map((o) => `--${o}`)
        .join(', ')})`,
    );
  }
}

type Values = ReturnType<typeof parse>['values'];

function readConfig(values: Values, catalog: Catalog): { text: string; config: ValidMcpConfig } {
  let text = values.config;
  if (values['config-file'] !== undefined) {
    try {
      text = fs.readFileSync(values['config-file'], 'utf8');
    } catch (err) {
      throw new UsageError(`--config-file: ${(err as Error).message}`);
    }
  }
  if (text === undefined) throw new UsageError('--config JSON (or --config-file F) is required');
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--config is not JSON: ${(err as Error).message}`);
  }
  const result = validateMcpConfig(input, catalog);
  if (!result.ok) throw new UsageError(formatMcpIssues(result.issues));
  return { text, config: result.config };
}

function describeFailures(status: GatewayStatus): string {
  return status.servers
    .filter((s) => s.state === 'failed')
    .map((s) => `server ${s.name} failed: ${s.error ?? 'unknown'}${s.stderr ? `\n  stderr: ${s.stderr.replace(/\n/g, '\n  ')}` : ''}`)
    .join('\n');
}

async function serve(values: Values): Promise<number> {
  const catalog = loadCatalog(values.catalog);
  const { config } = readConfig(values, catalog);
  const tokenFile = values['token-file'] ?? MCP_TOKEN_FILE;
  const token = process.env[MCP_TOKEN_ENV] || readTokenFile(tokenFile);
  const stateDir = values['state-dir'] ?? DEFAULT_STATE_DIR;
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const gateway = await startMcpGateway({
    config,
    catalog,
    token,
    port: integer('port', values.port, MCP_GATEWAY_PORT),
    host: values.host,
    serversDirs: values['servers-dir'] ?? [DEFAULT_SERVERS_DIR],
    imagesDirs: values['images-dir'] ?? DEFAULT_IMAGES_DIRS,
    stateDir,
  });
  const status = await gateway.settled;
  const failures = describeFailures(status);
  if (failures) process.stderr.write(`mcp-gateway: ${failures}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // Stopped on purpose: nothing to start again after a restart of the sandbox.
  removeDaemonFile(stateDir);
  await gateway.close();
  return 0;
}

async function fetchStatus(port: number, token: string): Promise<GatewayStatus | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`, { headers: { Authorization: `Bearer ${token}` } });
    return res.ok ? ((await res.json()) as GatewayStatus) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The command the E2B SDK runs (and waits for): validate, write the token and the config (0600), start the gateway
 * as a detached daemon, wait until every server is ready or failed, report, exit. Secrets in the config end up in
 * the 0600 file and the servers' env, not in the daemon's argv.
 */
async function launch(values: Values, self: string[]): Promise<number> {
  const catalog = loadCatalog(values.catalog);
  const { text } = readConfig(values, catalog);
  const tokenFile = values['token-file'] ?? MCP_TOKEN_FILE;
  const token = process.env[MCP_TOKEN_ENV] || randomUUID();
  writeTokenFile(tokenFile, token);
  const stateDir = values['state-dir'] ?? DEFAULT_STATE_DIR;
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const configFile = path.join(stateDir, 'config.json');
  fs.writeFileSync(configFile, text, { mode: 0o600 });
  fs.chmodSync(configFile, 0o600);
  const port = integer('port', values.port, MCP_GATEWAY_PORT);
  const args = ['serve', '--config-file', configFile, '--token-file', tokenFile, '--state-dir', stateDir, '--port', String(port)];
  if (values.host !== undefined) args.push('--host', values.host);
  for (const dir of values['servers-dir'] ?? []) args.push('--servers-dir', dir);
  for (const dir of values['images-dir'] ?? []) args.push('--images-dir', dir);
  if (values.catalog !== undefined) args.push('--catalog', values.catalog);
  const daemon: DaemonFile = { args, port, tokenFile };
  writeDaemonFile(stateDir, daemon);
  return startDaemon(daemon, stateDir, token, integer('wait-ms', values['wait-ms'], 50_000), self);
}

/**
 * `mcp-gateway restart`: the gateway launched in this sandbox, started again with what its launch wrote (the config
 * and token files stay on the sandbox's disk), when its processes ended without an orderly stop. Waits and reports
 * as the launch does. Nothing to do (exit 0) when none was launched, or one still answers on its port.
 */
async function restart(values: Values, self: string[]): Promise<number> {
  const stateDir = values['state-dir'] ?? DEFAULT_STATE_DIR;
  const daemon = readDaemonFile(stateDir);
  if (daemon === undefined) {
    console.log(`mcp-gateway: no gateway was launched with state dir ${stateDir}: nothing to restart`);
    return 0;
  }
  const token = readTokenFile(daemon.tokenFile);
  if ((await fetchStatus(daemon.port, token)) !== undefined) {
    console.log(`mcp-gateway: a gateway answers on port ${daemon.port}: nothing to restart`);
    return 0;
  }
  return startDaemon(daemon, stateDir, token, integer('wait-ms', values['wait-ms'], 50_000), self);
}

/** Starts the daemon detached, waits until every server is ready or failed, reports; 1 when nothing serves. */
async function startDaemon(daemon: DaemonFile, stateDir: string, token: string, waitMs: number, self: string[]): Promise<number> {
  const { port, args } = daemon;
  const logFile = path.join(stateDir, 'gateway.log');
  const log = fs.openSync(logFile, 'a', 0o600);
  const env = { ...process.env };
  delete env[MCP_TOKEN_ENV];
  const [command, ...prefix] = self;
  const child = spawn(command, [...prefix, ...args], { detached: true, stdio: ['ignore', log, log], env });
  fs.closeSync(log);
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `exited with ${signal ?? code}`;
  });
  child.unref();
  const failed = () => {
    removeDaemonFile(stateDir);
    return 1;
  };

  const deadline = Date.now() + waitMs;
  for (;;) {
    const status = await fetchStatus(port, token);
    if (status?.ready) {
      const ready = status.servers.filter((s) => s.state === 'ready');
      const failures = describeFailures(status);
      console.log(
        `mcp-gateway: serving ${ready.map((s) => `${s.name} (${s.tools} tools)`).join(', ') || 'no servers'} on port ${port} (pid ${child.pid}, log ${logFile})`,
      );
      if (failures) process.stderr.write(`mcp-gateway: ${failures}\n`);
      const pulling = status.servers.filter((s) => s.state === 'pulling');
      if (pulling.length > 0)
        console.log(`mcp-gateway: pulling ${pulling.map((s) => s.name).join(', ')}: each starts once its image is there`);
      if (ready.length === 0 && pulling.length === 0 && status.servers.length > 0) {
        // Nothing to serve: stop the daemon, so a corrected retry finds the port free.
        process.kill(-child.pid!, 'SIGTERM');
        return failed();
      }
      return 0;
    }
    if (exited !== undefined || Date.now() > deadline) {
      if (exited === undefined) process.kill(-child.pid!, 'SIGTERM');
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
      process.stderr.write(`mcp-gateway: the gateway ${exited ?? 'did not become ready in time'}; its log (${logFile}):\n${tail}\n`);
      return failed();
    }
    await sleep(50);
  }
}

async function printStatus(values: Values): Promise<number> {
  const token = process.env[MCP_TOKEN_ENV] || readTokenFile(values['token-file'] ?? MCP_TOKEN_FILE);
  const status = await fetchStatus(integer('port', values.port, MCP_GATEWAY_PORT), token);
  if (status === undefined) {
    console.error('mcp-gateway: no gateway answers on that port');
    return 1;
  }
  console.log(JSON.stringify(status, null, 2));
  return 0;
}

/**
 * Runs the `mcp-gateway` command. `self` is how to run this command again (node + script + any subcommand
 * prefix), for the daemon. Exit codes: 0 ok, 1 failure, 2 usage or invalid config.
 */
export async function runMcpGateway(argv: string[], self: string[]): Promise<number> {
  try {
    const { values, positionals } = parse(argv);
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    const [sub, ...rest] = positionals;
    if (sub === undefined) return await launch(values, self);
    if (sub === 'serve') return await serve(values);
    if (sub === 'status') return await printStatus(values);
    if (sub === 'restart') return await restart(values, self);
    if (sub === 'pull') {
      if (rest.length === 0) throw new UsageError('pull needs server names, e.g. mcp-gateway pull filesystem memory');
      return await pullServers(rest, loadCatalog(values.catalog), (values['servers-dir'] ?? [DEFAULT_SERVERS_DIR])[0]);
    }
    throw new UsageError(`unknown subcommand ${JSON.stringify(sub)} (serve, pull, status, restart, or none)`);
  } catch (err) {
    process.stderr.write(`mcp-gateway: ${(err as Error).message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}
