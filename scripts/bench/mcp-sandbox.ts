/**
 * MCP on real sandboxes (root; puts one link into the root network namespace, so run it alone). On the kit's
 * platform with its gateway in front, after the unmodified E2B SDK built the mcp-gateway template:
 * 1. create -> MCP-ready: `Sandbox.create({ mcp: { filesystem, memory } })` (the SDK returns once mcp-gateway
 *    reported its servers ready) and the first tools/list through the kit's gateway, against `Sandbox.create` of the
 *    same template without mcp in the same run: p50 of each and the ratio;
 * 2. a tool-call round trip through the kit's gateway against the same call straight to the sandbox's address.
 *
 *   node dist/scripts/bench/mcp-sandbox.js [--sandboxes 5] [--calls 300]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Sandbox } from 'e2b';
import { buildMcpGatewayTemplate } from '../../templates/mcp-gateway';
import { startGateway } from '../../src/gateway';
import { startPlatformOnHost } from '../../src/platform/on-host';

function log(msg: string): void {
  process.stderr.write(`mcp-sandbox-bench: ${msg}\n`);
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];
const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { sandboxes: { type: 'string', default: '5' }, calls: { type: 'string', default: '300' } },
    strict: true,
  });
  const n = Number(values.sandboxes);
  const calls = Number(values.calls);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-bench-'));
  const platform = await startPlatformOnHost({ stateDir, log: (line) => log(`platform: ${line}`) });
  const gateway = await startGateway({ catalog: platform.catalog });
  const opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
  const made: string[] = [];
  try {
    log('building the mcp-gateway template with the E2B SDK');
    // The host's trust store (with any TLS-inspecting proxy's CA) when no extra file is named.
    const extra = process.env.NODE_EXTRA_CA_CERTS ?? '/etc/ssl/certs/ca-certificates.crt';
    await buildMcpGatewayTemplate(
      { ...opts, onBuildLogs: (e) => e.level !== 'debug' && log(`build: ${e.message}`) },
      { extraCaCertsFile: extra && fs.existsSync(extra) ? extra : undefined },
    );

    const mcpReady: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < n; i++) {
      log(`round ${i + 1}/${n}: create with mcp, then without`);
      let t = process.hrtime.bigint();
      const sbx = await Sandbox.create({ ...opts, mcp: { filesystem: { paths: ['/home/user'] }, memory: {} } });
      made.push(sbx.sandboxId);
      const info = (await (await fetch(`${opts.apiUrl}/sandboxes/${sbx.sandboxId}`, { headers: { 'x-api-key': opts.apiKey } })).json()) as {
        envdAccessToken: string;
      };
      const client = await connect(`${opts.sandboxUrl}/mcp`, {
        'E2b-Sandbox-Id': sbx.sandboxId,
        'E2b-Sandbox-Port': '50005',
        'X-Access-Token': info.envdAccessToken,
        Authorization: `Bearer ${await sbx.getMcpToken()}`,
      });
      await client.listTools();
      mcpReady.push(ms(t));
      await client.close();
      t = process.hrtime.bigint();
      const bare = await Sandbox.create('mcp-gateway', opts);
      made.push(bare.sandboxId);
      plain.push(ms(t));
    }

    log(`tool calls: ${calls} through the kit gateway, ${calls} straight to the sandbox`);
    const sbx = await Sandbox.connect(made[0], opts);
    const token = await sbx.getMcpToken();
    const info = (await (await fetch(`${opts.apiUrl}/sandboxes/${sbx.sandboxId}`, { headers: { 'x-api-key': opts.apiKey } })).json()) as {
      envdAccessToken: string;
    };
    const entry = await platform.catalog.get(sbx.sandboxId);
    if (entry === undefined) throw new Error('the sandbox is not in the catalog');
    const viaKit = await connect(`${opts.sandboxUrl}/mcp`, {
      'E2b-Sandbox-Id': sbx.sandboxId,
      'E2b-Sandbox-Port': '50005',
      'X-Access-Token': info.envdAccessToken,
      Authorization: `Bearer ${token}`,
    });
    const direct = await connect(`http://${entry.host}:50005/mcp`, { Authorization: `Bearer ${token}` });
    const round = async (client: Client) => {
      const samples: number[] = [];
      for (let i = 0; i < calls; i++) {
        const t = process.hrtime.bigint();
        await client.callTool({ name: 'filesystem__list_allowed_directories', arguments: {} });
        samples.push(ms(t));
      }
      return samples;
    };
    await round(viaKit);
    await round(direct);
    const kit = [...(await round(viaKit)), ...(await round(viaKit))];
    const straight = [...(await round(direct)), ...(await round(direct))];
    await viaKit.close();
    await direct.close();

    const report = {
      createToMcpReadyMs: { p50: +p50(mcpReady).toFixed(1), all: mcpReady.map((x) => +x.toFixed(1)) },
      createWithoutMcpMs: { p50: +p50(plain).toFixed(1), all: plain.map((x) => +x.toFixed(1)) },
      mcpReadyRatio: +(p50(mcpReady) / p50(plain)).toFixed(2),
      toolCallViaKitGateway: { p50: +p50(kit).toFixed(3), p99: +p99(kit).toFixed(3) },
      toolCallStraightToSandbox: { p50: +p50(straight).toFixed(3), p99: +p99(straight).toFixed(3) },
      kitGatewayRatio: +(p50(kit) / p50(straight)).toFixed(2),
    };
    console.log(JSON.stringify(report, null, 2));
    console.log(
      `create -> MCP-ready p50 ${report.createToMcpReadyMs.p50} ms vs create without mcp ${report.createWithoutMcpMs.p50} ms = ${report.mcpReadyRatio}x; ` +
        `tool call via the kit gateway p50 ${report.toolCallViaKitGateway.p50} ms vs straight ${report.toolCallStraightToSandbox.p50} ms = ${report.kitGatewayRatio}x`,
    );
    return 0;
  } finally {
    for (const id of made) await Sandbox.kill(id, opts).catch(() => undefined);
    await gateway.close();
    await platform.close({ killSandboxes: true });
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`mcp-sandbox-bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
