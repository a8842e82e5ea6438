/**
 * Create -> MCP-ready with a preinstalled image server against an npm one (root; puts one link into the root network
 * namespace, so run it alone). The same server runs both ways: the lab's registry holds `mcp/time` built from the
 * npm `everything` server (bundled, with the host's node), and one template built by the unmodified E2B SDK holds
 * both the npm `everything` server and that image (`--server everything --server time`). Each round creates
 * `Sandbox.create(template, { mcp: { time: {} } })` and `{ mcp: { everything: {} } }`, alternating which goes first,
 * and times each until the first tools/list through the kit's gateway answers. Prints p50 of each and the ratio.
 *
 *   node dist/scripts/bench/mcp-image-start.js [--rounds 5]
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
import { pushEverythingImage, startLabRegistry } from '../../test/integration/mcp/helpers/lab-registry';

function log(msg: string): void {
  process.stderr.write(`mcp-image-start-bench: ${msg}\n`);
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;
const ALIAS = 'mcp-image-bench';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } }, strict: true });
  const rounds = Number(values.rounds);
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-image-bench-'));
  const registry = await startLabRegistry();
  const made: string[] = [];
  let platform: Awaited<ReturnType<typeof startPlatformOnHost>> | undefined;
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  try {
    log('building mcp/time from the npm everything server into the lab registry');
    pushEverythingImage(registry.host, 'mcp/time:latest');
    platform = await startPlatformOnHost({ stateDir, log: (line) => log(`platform: ${line}`), mcpImages: { mirror: registry.host } });
    gateway = await startGateway({ catalog: platform.catalog });
    const opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
    log(`building the template ${ALIAS} (everything from npm, time as a preinstalled image) with the E2B SDK`);
    const extra = process.env.NODE_EXTRA_CA_CERTS ?? '/etc/ssl/certs/ca-certificates.crt';
    await buildMcpGatewayTemplate(
      { ...opts, alias: ALIAS, onBuildLogs: (e) => e.level !== 'debug' && log(`build: ${e.message}`) },
      { servers: ['everything', 'time'], extraCaCertsFile: extra && fs.existsSync(extra) ? extra : undefined },
    );

    /** Sandbox.create with `mcp` until its first tools/list through the kit's gateway answers. */
    const mcpReady = async (mcp: Record<string, object>, tool: string): Promise<number> => {
      const t = process.hrtime.bigint();
      const sbx = await Sandbox.create(ALIAS, { ...opts, mcp: mcp as never });
      made.push(sbx.sandboxId);
      const info = (await (await fetch(`${opts.apiUrl}/sandboxes/${sbx.sandboxId}`, { headers: { 'x-api-key': opts.apiKey } })).json()) as {
        envdAccessToken: string;
      };
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${opts.sandboxUrl}/mcp`), {
          requestInit: {
            headers: {
              'E2b-Sandbox-Id': sbx.sandboxId,
              'E2b-Sandbox-Port': '50005',
              'X-Access-Token': info.envdAccessToken,
              Authorization: `Bearer ${await sbx.getMcpToken()}`,
            },
          },
        }),
      );
      const names = (await client.listTools()).tools.map((x) => x.name);
      const took = ms(t);
      await client.close();
      if (!names.includes(tool)) throw new Error(`${JSON.stringify(mcp)}: ${tool} is not listed (${names.join(', ')})`);
      await Sandbox.kill(sbx.sandboxId, opts);
      return took;
    };
    const image: number[] = [];
    const npm: number[] = [];
    const runImage = async () => image.push(await mcpReady({ time: {} }, 'time__echo'));
    const runNpm = async () => npm.push(await mcpReady({ everything: {} }, 'everything__echo'));
    log('warm-up: one of each');
    await runImage();
    await runNpm();
    image.length = 0;
    npm.length = 0;
    for (let i = 0; i < rounds; i++) {
      log(`round ${i + 1}/${rounds}`);
      if (i % 2 === 0) {
        await runImage();
        await runNpm();
      } else {
        await runNpm();
        await runImage();
      }
    }
    const report = {
      rounds,
      preinstalledImageServerMs: { p50: +p50(image).toFixed(1), all: image.map((x) => +x.toFixed(1)) },
      npmServerMs: { p50: +p50(npm).toFixed(1), all: npm.map((x) => +x.toFixed(1)) },
      imageToNpmRatio: +(p50(image) / p50(npm)).toFixed(2),
    };
    console.log(JSON.stringify(report, null, 2));
    console.log(
      `create -> MCP-ready p50: preinstalled image server ${report.preinstalledImageServerMs.p50} ms vs npm server ${report.npmServerMs.p50} ms = ${report.imageToNpmRatio}x`,
    );
    return 0;
  } finally {
    const opts = platform ? { apiKey: platform.apiKey, apiUrl: platform.url } : undefined;
    if (opts) for (const id of made) await Sandbox.kill(id, opts).catch(() => undefined);
    await gateway?.close();
    await platform?.close({ killSandboxes: true });
    await registry.close();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`mcp-image-start-bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
