/**
 * MCP benchmark. Part 1: a tool-call round trip (the `everything` server's `echo`) through the in-sandbox
 * mcp-gateway (Streamable HTTP, bearer token, namespaced tools) against the same call over stdio to the same
 * server in the same run, and against the same server serving Streamable HTTP itself (its own `streamableHttp`
 * mode: the SDK's HTTP transport without a gateway hop): p50/p99 latency of each and the ratios, one client,
 * closed loop, rounds rotating which goes first. Part 2 (first): validation of the same `mcp` config against the
 * full built-in catalog (the public one, 266 entries) and against the 4 reference entries alone, same run:
 * microseconds per validation, catalog load time, and the ratios.
 *
 *   node dist/scripts/bench/mcp.js [--calls 2000] [--rounds 3] [--servers-dir DIR] [--json FILE] [--validation-only]
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import referenceJson from '../../templates/mcp/catalog.json';
import publicJson from '../../templates/mcp/public-catalog.json';
import { builtinCatalog, mergeBuiltin, parseCatalog } from '../../src/mcp/catalog/load';
import { parseMcpConfig, validateMcpConfig } from '../../src/mcp/config/validate';
import { startMcpGateway } from '../../src/mcp/gateway/server';
import { binResolver } from '../../src/mcp/launch/resolve-bin';
import { freePort } from '../../test/helpers/free-port';

const ROOT = path.resolve(__dirname, fs.existsSync(path.resolve(__dirname, '../../package.json')) ? '../..' : '../../..');

function log(msg: string): void {
  process.stderr.write(`mcp-bench: ${msg}\n`);
}

interface Latency {
  calls: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

function summarize(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { calls: sorted.length, p50Ms: +at(0.5).toFixed(3), p99Ms: +at(0.99).toFixed(3), meanMs: +mean.toFixed(3) };
}

async function roundTrips(client: Client, tool: string, calls: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    const result = await client.callTool({ name: tool, arguments: { message: `m${i}` } });
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
  }
  return samples;
}

async function toolCallBench(calls: number, rounds: number, serversDir: string) {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-bench-'));
  const token = `bench-${Math.random().toString(36).slice(2)}`;
  const gateway = await startMcpGateway({
    config: parseMcpConfig({ everything: {} }),
    catalog: builtinCatalog(),
    token,
    port: 0,
    host: '127.0.0.1',
    serversDirs: [serversDir],
    stateDir: state,
    log: () => undefined,
  });
  const viaGateway = new Client({ name: 'bench', version: '1' });
  const direct = new Client({ name: 'bench', version: '1' });
  const ownHttp = new Client({ name: 'bench', version: '1' });
  const { npm } = builtinCatalog().everything.run as { npm: { package: string; bin: string; args: string[] } };
  const bin = binResolver([serversDir])(npm.package, npm.bin);
  const httpPort = await freePort();
  const httpServer = spawn(process.execPath, [bin, 'streamableHttp'], {
    env: { ...process.env, PORT: String(httpPort) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      httpServer.stderr.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
      httpServer.once('exit', (code) => reject(new Error(`everything streamableHttp exited ${code}`)));
    });
    await ownHttp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${httpPort}/mcp`)));
    const status = await gateway.settled;
    if (status.servers.some((s) => s.state !== 'ready')) throw new Error(`gateway not ready: ${JSON.stringify(status)}`);
    await viaGateway.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${gateway.port}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [bin, ...npm.args], stderr: 'ignore' }));

    log(`warm-up: ${Math.min(200, calls)} calls each`);
    await roundTrips(viaGateway, 'everything__echo', Math.min(200, calls));
    await roundTrips(direct, 'echo', Math.min(200, calls));
    await roundTrips(ownHttp, 'echo', Math.min(200, calls));
    const peers = {
      gateway: { client: viaGateway, tool: 'everything__echo', what: 'through the mcp-gateway (HTTP -> stdio)', samples: [] as number[] },
      stdio: { client: direct, tool: 'echo', what: 'over stdio to the server', samples: [] as number[] },
      serverHttp: { client: ownHttp, tool: 'echo', what: "over the server's own Streamable HTTP", samples: [] as number[] },
    };
    const names = Object.keys(peers) as (keyof typeof peers)[];
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < names.length; k++) {
        const peer = peers[names[(r + k) % names.length]];
        log(`round ${r + 1}/${rounds}: ${calls} calls ${peer.what}`);
        peer.samples.push(...(await roundTrips(peer.client, peer.tool, calls)));
      }
    }
    const gateway_ = summarize(peers.gateway.samples);
    const stdio_ = summarize(peers.stdio.samples);
    const http_ = summarize(peers.serverHttp.samples);
    return {
      gateway: gateway_,
      stdio: stdio_,
      serverHttp: http_,
      ratioP50VsStdio: +(gateway_.p50Ms / stdio_.p50Ms).toFixed(2),
      ratioP99VsStdio: +(gateway_.p99Ms / stdio_.p99Ms).toFixed(2),
      ratioP50VsServerHttp: +(gateway_.p50Ms / http_.p50Ms).toFixed(2),
    };
  } finally {
    await ownHttp.close().catch(() => undefined);
    httpServer.kill();
    await viaGateway.close().catch(() => undefined);
    await direct.close().catch(() => undefined);
    await gateway.close();
    fs.rmSync(state, { recursive: true, force: true });
  }
}

/** Microseconds per validation of `config` against `catalog` (after a first, schema-building one). */
function perValidation(catalog: ReturnType<typeof builtinCatalog>, config: unknown, iterations: number): number {
  if (!validateMcpConfig(config, catalog).ok) throw new Error('bench config invalid');
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) validateMcpConfig(config, catalog);
  return +(Number(process.hrtime.bigint() - started) / 1e3 / iterations).toFixed(2);
}

function msOf(fn: () => unknown): number {
  const started = process.hrtime.bigint();
  fn();
  return +(Number(process.hrtime.bigint() - started) / 1e6).toFixed(1);
}

/**
 * The full built-in catalog (the public one and the reference servers) against the 4 reference entries alone, same
 * run: loading each (parse and check of the JSON), and validating the same 3-server config against each, rounds
 * alternating which goes first; plus a config of 3 public image servers against the full catalog.
 */
function validationBench(iterations: number, rounds: number) {
  const referenceLoadMs = msOf(() => parseCatalog(referenceJson, 'reference'));
  const fullLoadMs = msOf(() => mergeBuiltin(parseCatalog(publicJson, 'public'), parseCatalog(referenceJson, 'reference')));
  const reference = parseCatalog(referenceJson, 'reference');
  const full = builtinCatalog();
  const config = { filesystem: { paths: ['/home/user'] }, memory: {}, sequentialThinking: { disableThoughtLogging: true } };
  const publicConfig = {
    grafana: { apiKey: 'k', url: 'http://grafana:3000' },
    airtable: { airtableApiKey: 'k', nodeenv: 'production' },
    redis: {
      caCerts: '',
      caPath: '',
      certReqs: '',
      clusterMode: false,
      host: 'r',
      port: 6379,
      pwd: 'p',
      ssl: false,
      sslCertfile: '',
      sslKeyfile: '',
      username: 'u',
    },
  };
  log(`validation: ${rounds} rounds of ${iterations} validations of a 3-server config against each catalog`);
  const referenceUs: number[] = [];
  const fullUs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['reference', 'full'] : ['full', 'reference'];
    for (const which of order)
      (which === 'full' ? fullUs : referenceUs).push(perValidation(which === 'full' ? full : reference, config, iterations));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const referenceMedian = median(referenceUs);
  const fullMedian = median(fullUs);
  return {
    referenceEntries: Object.keys(reference).length,
    fullEntries: Object.keys(full).length,
    referenceUs: referenceMedian,
    fullUs: fullMedian,
    ratio: +(fullMedian / referenceMedian).toFixed(2),
    publicServersFullUs: perValidation(full, publicConfig, iterations),
    referenceLoadMs,
    fullLoadMs,
    loadRatio: +(fullLoadMs / referenceLoadMs).toFixed(1),
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '3' },
      'servers-dir': { type: 'string', default: ROOT },
      json: { type: 'string' },
      'validation-only': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const validation = validationBench(20_000, 5);
  const summary =
    `validation: ${validation.fullUs} us against the full catalog (${validation.fullEntries} entries) vs ${validation.referenceUs} us against the ` +
    `${validation.referenceEntries} reference entries = ${validation.ratio}x; loading ${validation.fullLoadMs} ms vs ${validation.referenceLoadMs} ms = ${validation.loadRatio}x`;
  if (values['validation-only']) {
    console.log(JSON.stringify({ validation }, null, 2));
    console.log(summary);
    return 0;
  }
  const toolCalls = await toolCallBench(Number(values.calls), Number(values.rounds), values['servers-dir']!);
  const report = { toolCall: toolCalls, validation };
  console.log(JSON.stringify(report, null, 2));
  console.log(
    `tool call round trip p50: gateway ${toolCalls.gateway.p50Ms} ms vs stdio ${toolCalls.stdio.p50Ms} ms = ${toolCalls.ratioP50VsStdio}x (p99 ${toolCalls.ratioP99VsStdio}x), ` +
      `vs the server's own HTTP ${toolCalls.serverHttp.p50Ms} ms = ${toolCalls.ratioP50VsServerHttp}x; ` +
      summary,
  );
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(report, null, 2));
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`mcp-bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
