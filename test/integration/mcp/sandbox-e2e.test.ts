/**
 * MCP end to end, on the real platform (OCI runtime, agent, template service) with the kit's gateway in front:
 * the unmodified E2B SDK builds the mcp-gateway template and runs `Sandbox.create({ mcp })`; the MCP SDK client
 * reaches the sandbox's gateway through the kit's gateway with the sandbox token and the MCP token. Root only; puts
 * one link into the root network namespace (the standalone sandbox network) on a /24 of its own, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { startPlatformOnHost, type PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { runEntry } from '../../helpers/node-script';
import { text, waitFor } from './helpers/common';
import {
  gatewayStatus,
  type KitOpts,
  mcpClient as kitClient,
  sandboxToken as tokenOf,
  sdk as sdkWith,
  serverStates,
} from './helpers/kit-client';
import { CLI_SOURCE } from '../../helpers/cli';
import { type LabRegistry, pushEverythingImage, startLabRegistry } from './helpers/lab-registry';

jest.setTimeout(1_200_000);

const PLAIN_SERVER = fs.readFileSync(path.join(__dirname, 'fixtures', 'plain-server.js')).toString('base64');

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let opts: KitOpts;
let registry: LabRegistry;
const made: string[] = [];

const sdk = (request: Record<string, unknown>) => sdkWith(opts, request);
const sandboxToken = (sandboxID: string) => tokenOf(opts, sandboxID);
const mcpClient = (sandboxID: string, sandboxTokenValue: string, mcpToken: string) =>
  kitClient(opts, sandboxID, sandboxTokenValue, mcpToken);

/** The host form of getMcpUrl(), `50005-<id>.<domain>`, on the kit's gateway (domain `localhost`, resolved here). */
async function hostFormClient(
  sandboxID: string,
  sandboxTokenValue: string,
  mcpToken: string,
): Promise<{ client: Client; close(): Promise<void> }> {
  const dispatcher = new Agent({
    connect: {
      lookup: (_host, o, cb) =>
        (o as { all?: boolean }).all ? cb(null, [{ address: '127.0.0.1', family: 4 }] as never, 4) : cb(null, '127.0.0.1', 4),
    },
  });
  const fetchVia = ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
  const client = new Client({ name: 'e2e-host-form', version: '1' });
  const url = new URL(`http://50005-${sandboxID}.localhost:${gateway.port}/mcp`);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      fetch: fetchVia,
      requestInit: { headers: { 'X-Access-Token': sandboxTokenValue, Authorization: `Bearer ${mcpToken}` } },
    }),
  );
  return {
    client,
    close: async () => {
      await client.close();
      await dispatcher.close();
    },
  };
}

beforeAll(async () => {
  await baseRootfs();
  for (const entry of bundleEntries()) await bundle(entry);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-e2e-'));
  // The lab's registry stands in for Docker Hub: it holds the catalog's `mcp/time` image, built here from the npm
  // `everything` server; the other catalog images are not there.
  registry = await startLabRegistry();
  pushEverythingImage(registry.host, 'mcp/time:latest');
  platform = await startPlatformOnHost({
    stateDir,
    log: (line) => process.stderr.write(`platform: ${line}\n`),
    mcpImages: { mirror: registry.host },
  });
  gateway = await startGateway({ catalog: platform.catalog });
  opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
  // The template the SDK picks by default for mcp, built by the SDK on this platform.
  // Built with the CLI_SOURCE a user runs (template-build.test.ts builds it from a plain SDK program); the host's trust store
  // (with any TLS-inspecting proxy's CA) goes along.
  await buildMcpTemplate([]);
}, ROOTFS_TIMEOUT_MS + 1_000_000);

/** `sandbox-kit template build --template mcp-gateway ARGS` against the platform; its output. */
async function buildMcpTemplate(args: string[]): Promise<string> {
  const extra = process.env.NODE_EXTRA_CA_CERTS ?? '/etc/ssl/certs/ca-certificates.crt';
  const build = await runEntry(CLI_SOURCE, {
    args: [
      'template',
      'build',
      '--template',
      'mcp-gateway',
      '--api-url',
      platform.url,
      ...(fs.existsSync(extra) ? ['--extra-ca-certs', extra] : []),
      ...args,
    ],
    env: { E2B_API_KEY: platform.apiKey },
    timeoutMs: 1_000_000,
  });
  const output = build.stdout.join('\n');
  if (build.code !== 0 || !/ is ready: templateID \S+/.test(output))
    throw new Error(
      `sandbox-kit template build --template mcp-gateway ${args.join(' ')} failed (${build.code}): ${build.stderr || output.slice(-2000)}`,
    );
  return output;
}

afterAll(async () => {
  for (const id of made) await sdk({ op: 'kill', sandboxId: id }).catch(() => undefined);
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  await registry?.close();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

test('Sandbox.create({ mcp }) runs filesystem, memory and a custom server; the MCP client lists and calls them through the kit gateway', async () => {
  const created = await sdk({
    op: 'create',
    mcp: {
      filesystem: { paths: ['/home/user'] },
      memory: {},
      custom: { plain: { installCmd: `echo ${PLAIN_SERVER} | base64 -d > server.js`, runCmd: '/opt/sandbox-kit/node server.js' } },
    },
  });
  if (!created.ok) throw new Error(`create failed: ${created.name}: ${created.message}`);
  const { sandboxId, mcpUrl, mcpToken } = created.value as { sandboxId: string; mcpUrl: string; mcpToken: string };
  made.push(sandboxId);
  expect(mcpUrl).toBe(`https://50005-${sandboxId}.e2b.app/mcp`);
  const token = await sandboxToken(sandboxId);

  const client = await mcpClient(sandboxId, token, mcpToken);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'filesystem__write_file',
        'filesystem__read_text_file',
        'memory__create_entities',
        'memory__read_graph',
        'plain__shout',
      ]),
    );

    const write = await client.callTool({
      name: 'filesystem__write_file',
      arguments: { path: '/home/user/note.txt', content: 'written over MCP' },
    });
    expect(write.isError).toBeFalsy();
    expect(text(await client.callTool({ name: 'filesystem__read_text_file', arguments: { path: '/home/user/note.txt' } }))).toBe(
      'written over MCP',
    );
    const outside = await client.callTool({ name: 'filesystem__read_text_file', arguments: { path: '/etc/passwd' } });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toMatch(/access denied/i);

    await client.callTool({
      name: 'memory__create_entities',
      arguments: { entities: [{ name: 'sandbox', entityType: 'thing', observations: ['remembers'] }] },
    });
    expect(text(await client.callTool({ name: 'memory__read_graph', arguments: {} }))).toContain('remembers');
    expect(text(await client.callTool({ name: 'plain__shout', arguments: { text: 'through two gateways' } }))).toBe('THROUGH TWO GATEWAYS');
  } finally {
    await client.close();
  }

  // getMcpUrl()'s host form routes the same way.
  const byHost = await hostFormClient(sandboxId, token, mcpToken);
  try {
    expect(text(await byHost.client.callTool({ name: 'plain__shout', arguments: { text: 'by host' } }))).toBe('BY HOST');
  } finally {
    await byHost.close();
  }

  // A wrong MCP token is the sandbox gateway's 401. Port 50005 is public like every port but the agent's (as on
  // E2B): the MCP token alone lets a client in, and the sandbox token is not even passed on to it.
  await expect(mcpClient(sandboxId, token, 'not-the-mcp-token')).rejects.toMatchObject({ code: 401 });
  await (await mcpClient(sandboxId, 'not-the-sandbox-token', mcpToken)).close();
});

test('a catalog server run from an OCI image is listed and called; one whose image cannot be fetched is reported with the reason, and the sandbox starts', async () => {
  const secret = 'glsa-E2E-SECRET-7f3';
  const created = await sdk({
    op: 'create',
    mcp: {
      time: {},
      grafana: { apiKey: secret, url: 'http://grafana.invalid:3000' },
      airtable: { airtableApiKey: secret, nodeenv: 'production' },
    },
  });
  if (!created.ok) throw new Error(`create failed: ${created.name}: ${created.message}`);
  const { sandboxId, mcpToken } = created.value as { sandboxId: string; mcpToken: string };
  made.push(sandboxId);
  const token = await sandboxToken(sandboxId);
  // The template holds none of the three images: they are pulled after the create answered, and each server is
  // `pulling` until its image is attached (pull-after-create.test.ts) or it failed.
  const settled = await waitFor(
    'every server to be ready or failed',
    async () => {
      const servers = await serverStates(opts, sandboxId, mcpToken);
      return servers?.every((s) => s.state === 'ready' || s.state === 'failed') ? servers : undefined;
    },
    240_000,
  );
  expect(settled.map((s) => [s.name, s.state]).sort()).toEqual([
    ['airtable', 'failed'],
    ['grafana', 'failed'],
    ['time', 'ready'],
  ]);
  const client = await mcpClient(sandboxId, token, mcpToken);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['time__echo', 'time__get-sum']));
    expect(names.filter((n) => n.startsWith('grafana__') || n.startsWith('airtable__'))).toEqual([]);
    expect(text(await client.callTool({ name: 'time__echo', arguments: { message: 'from an image' } }))).toBe('Echo: from an image');
    const failed = await client.callTool({ name: 'grafana__search_dashboards', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^server grafana is failed: image mcp\/grafana could not be fetched: 127\.0\.0\.1:\d+\/mcp\/grafana: /);
    expect(text(failed)).not.toContain(secret);
  } finally {
    await client.close();
  }
  const { status, body } = await gatewayStatus(opts, sandboxId, mcpToken);
  expect(status).toBe(200);
  const servers = (JSON.parse(body) as { servers: { name: string; state: string; error?: string; pid?: number }[] }).servers;
  expect(servers.find((s) => s.name === 'time')).toMatchObject({ state: 'ready' });
  expect(servers.find((s) => s.name === 'airtable')).toMatchObject({
    state: 'failed',
    error: expect.stringContaining('could not be fetched'),
  });
  expect(body).not.toContain(secret);

  // The image's filesystem (attached after the create) has a /dev of its own (its server read /dev/urandom and wrote
  // /dev/null before it started) holding six nodes and nothing more; a disk's node cannot be made in it.
  const root = '/run/mcp-images/mcp_time/rootfs';
  const run = async (cmd: string) =>
    (await sdk({ op: 'run', sandboxId, cmd })).value as { exitCode: number; stdout: string; stderr: string };
  expect((await run(`ls ${root}/dev`)).stdout.split('\n').filter(Boolean).sort()).toEqual([
    'full',
    'null',
    'random',
    'tty',
    'urandom',
    'zero',
  ]);
  expect((await run(`stat -c %t:%T ${root}/dev/urandom ${root}/dev/null`)).stdout).toBe('1:9\n1:3\n');
  const mknod = await run(`mknod ${root}/dev/sda b 8 0`);
  expect(mknod.exitCode).not.toBe(0);
  // Refused: no CAP_MKNOD (and the attached image's /dev is the host's tmpfs, not the sandbox's to write).
  expect(mknod.stderr).toMatch(/Operation not permitted|Permission denied/);

  // And the sandbox's own /proc (its server read its /proc/self/status before it started): the server's process is
  // in it, the host's processes are not; the sandbox cannot take it away.
  const procPids = (await run(`ls ${root}/proc`)).stdout
    .split('\n')
    .filter((l) => /^\d+$/.test(l))
    .map(Number);
  expect(procPids).toContain(servers.find((s) => s.name === 'time')?.pid);
  expect(procPids).not.toContain(process.pid);
  const umount = await run(`umount ${root}/proc`);
  expect(umount.exitCode).not.toBe(0);
  expect(umount.stderr).toMatch(/must be superuser|not permitted/);
});

test.each([
  ['an unknown server', { filesytem: { paths: ['/home/user'] } }, 'mcp.filesytem'],
  ['an unknown key', { memory: { path: '/tmp/m.jsonl' } }, 'mcp.memory.path'],
  ['a wrong type', { filesystem: { paths: '/home/user' } }, 'mcp.filesystem.paths: got "/home/user"; expected a list of strings'],
  ['a missing required key', { filesystem: {} }, 'mcp.filesystem.paths: got (missing); expected a list of strings (required)'],
  // Public catalog entries, one per property type; secrets never echoed.
  ['a missing string', { airtable: { nodeenv: 'production' } }, 'mcp.airtable.airtableApiKey: got (missing); expected a string (required)'],
  [
    'a secret of a wrong type',
    { airtable: { airtableApiKey: 42, nodeenv: 'x' } },
    'mcp.airtable.airtableApiKey: got (secret, not shown); expected a string',
  ],
  ['a wrong number', { textToGraphql: { modelTemperature: 'warm' } }, 'mcp.textToGraphql.modelTemperature: got "warm"; expected a number'],
  [
    'a wrong boolean',
    { glif: { apiToken: 't', ids: 'a', ignoredSaved: 'yes' } },
    'mcp.glif.ignoredSaved: got "yes"; expected true or false',
  ],
  ['a wrong string list', { git: { paths: '/repo' } }, 'mcp.git.paths: got "/repo"; expected a list of strings'],
  ['a wrong string-or-number', { jetbrains: { port: true } }, 'mcp.jetbrains.port: got true; expected a string or a number'],
  ['a missing string-or-number', { jetbrains: {} }, 'mcp.jetbrains.port: got (missing); expected a string or a number (required)'],
])('%s fails validation before any sandbox is made', async (_kind, mcp, named) => {
  const before = await sdk({ op: 'list' });
  const result = await sdk({ op: 'create', mcp });
  expect(result).toMatchObject({ ok: false, message: expect.stringContaining(named) });
  expect(result.message).toMatch(/^400: /);
  const after = await sdk({ op: 'list' });
  expect(after.value).toEqual(before.value);
});

// Last: it stops the lab's registry.
test('a template built with --server time holds its image: a sandbox from it runs time with the registry stopped', async () => {
  const alias = 'mcp-time';
  const output = await buildMcpTemplate(['--server', 'time', '--alias', alias]);
  expect(output).toMatch(/preinstalling the image mcp\/time \(from 127\.0\.0\.1:\d+\/mcp\/time\) under \/opt\/mcp-images\/mcp_time/);
  // Nothing can be pulled from here on: the create must find the image in the template.
  await registry.close();
  const created = await sdk({ op: 'create', template: alias, mcp: { time: {} } });
  if (!created.ok) throw new Error(`create failed: ${created.name}: ${created.message}`);
  const { sandboxId, mcpToken } = created.value as { sandboxId: string; mcpToken: string };
  made.push(sandboxId);
  const client = await mcpClient(sandboxId, await sandboxToken(sandboxId), mcpToken);
  try {
    expect(text(await client.callTool({ name: 'time__echo', arguments: { message: 'preinstalled' } }))).toBe('Echo: preinstalled');
  } finally {
    await client.close();
  }
  expect(await serverStates(opts, sandboxId, mcpToken)).toEqual([expect.objectContaining({ name: 'time', state: 'ready' })]);
});
