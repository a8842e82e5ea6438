/**
 * Create -> answered with an image server whose image is not pulled yet: pulled after the create answered (attached
 * to the running sandbox) against pulled within the create (the path runsc keeps), same run (root; puts two links
 * into the root network namespace, so run it alone). Two platforms on this host, one each way, share the lab's
 * registry holding `mcp/time` (built from the npm `everything` server, bundled with the host's node) and each builds
 * the same bare `mcp-gateway` template (the gateway command, no server) with the unmodified E2B SDK. Each round
 * empties both platforms' image stores, then times `Sandbox.create({ mcp: { time: {} } })` until it returns and until
 * the first tools/list through the kit's gateway lists `time__echo`, alternating which platform goes first. Prints
 * p50 of each and the ratios (after / before).
 *
 *   node dist/scripts/bench/mcp-image-pull.js [--rounds 5]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Sandbox, Template } from 'e2b';
import { startGateway } from '../../src/gateway';
import { GATEWAY_COMMAND_PATH, gatewayWrapperScript } from '../../src/mcp/template/wrapper';
import { startPlatformOnHost } from '../../src/platform/on-host';
import { pushEverythingImage, startLabRegistry } from '../../test/integration/mcp/helpers/lab-registry';

function log(msg: string): void {
  process.stderr.write(`mcp-image-pull-bench: ${msg}\n`);
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;

type Way = 'after' | 'within';

interface Side {
  way: Way;
  stateDir: string;
  platform: Awaited<ReturnType<typeof startPlatformOnHost>>;
  gateway: Awaited<ReturnType<typeof startGateway>>;
  opts: { apiKey: string; apiUrl: string };
  sandboxUrl: string;
}

async function startSide(way: Way, mirror: string): Promise<Side> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), `sk-mcp-pull-bench-${way}-`));
  const platform = await startPlatformOnHost({
    stateDir,
    log: (line) => log(`${way}: ${line}`),
    mcpImages: { mirror, ...(way === 'within' ? { pullWithinCreate: true } : {}) },
    gc: { intervalSeconds: 0 },
  });
  const gateway = await startGateway({ catalog: platform.catalog });
  const opts = { apiKey: platform.apiKey, apiUrl: platform.url };
  const wrapper = Buffer.from(gatewayWrapperScript()).toString('base64');
  log(`${way}: building the bare mcp-gateway template with the E2B SDK`);
  await Template.build(
    Template()
      .fromDebianImage('bookworm')
      .runCmd(`echo ${wrapper} | base64 -d > ${GATEWAY_COMMAND_PATH} && chmod 0755 ${GATEWAY_COMMAND_PATH}`, { user: 'root' }),
    { ...opts, alias: 'mcp-gateway', memoryMB: 1024, cpuCount: 1 },
  );
  return { way, stateDir, platform, gateway, opts, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
}

/** One create with a not-yet-pulled image server: until it returned, and until time__echo is listed. */
async function round(side: Side): Promise<{ answered: number; ready: number }> {
  // Nothing of the image is on the host: no sandbox uses it, the collector does not run.
  fs.rmSync(path.join(side.stateDir, 'images'), { recursive: true, force: true });
  const t = process.hrtime.bigint();
  const sbx = await Sandbox.create({ ...side.opts, sandboxUrl: side.sandboxUrl, mcp: { time: {} } as never });
  const answered = ms(t);
  try {
    const info = (await (
      await fetch(`${side.opts.apiUrl}/sandboxes/${sbx.sandboxId}`, { headers: { 'x-api-key': side.opts.apiKey } })
    ).json()) as { envdAccessToken: string };
    const headers = {
      'E2b-Sandbox-Id': sbx.sandboxId,
      'E2b-Sandbox-Port': '50005',
      'X-Access-Token': info.envdAccessToken,
      Authorization: `Bearer ${await sbx.getMcpToken()}`,
    };
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${side.sandboxUrl}/mcp`), { requestInit: { headers } }));
    try {
      const deadline = Date.now() + 300_000;
      while (!(await client.listTools()).tools.some((x) => x.name === 'time__echo')) {
        if (Date.now() > deadline) throw new Error(`${side.way}: time__echo was not listed within 300 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await client.close();
    }
    return { answered, ready: ms(t) };
  } finally {
    await Sandbox.kill(sbx.sandboxId, side.opts);
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } }, strict: true });
  const rounds = Number(values.rounds);
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const registry = await startLabRegistry();
  const sides: Side[] = [];
  try {
    log('building mcp/time from the npm everything server into the lab registry');
    pushEverythingImage(registry.host, 'mcp/time:latest');
    sides.push(await startSide('within', registry.host));
    sides.push(await startSide('after', registry.host));
    const got: Record<Way, { answered: number[]; ready: number[] }> = {
      within: { answered: [], ready: [] },
      after: { answered: [], ready: [] },
    };
    log('warm-up: one of each');
    for (const side of sides) await round(side);
    for (let i = 0; i < rounds; i++) {
      log(`round ${i + 1}/${rounds}`);
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const r = await round(side);
        got[side.way].answered.push(r.answered);
        got[side.way].ready.push(r.ready);
      }
    }
    const fmt = (xs: number[]) => ({ p50: +p50(xs).toFixed(1), all: xs.map((x) => +x.toFixed(1)) });
    const report = {
      rounds,
      createAnsweredMs: { pullWithinCreate: fmt(got.within.answered), pullAfterCreate: fmt(got.after.answered) },
      mcpReadyMs: { pullWithinCreate: fmt(got.within.ready), pullAfterCreate: fmt(got.after.ready) },
      answeredRatio: +(p50(got.after.answered) / p50(got.within.answered)).toFixed(2),
      readyRatio: +(p50(got.after.ready) / p50(got.within.ready)).toFixed(2),
    };
    console.log(JSON.stringify(report, null, 2));
    console.log(
      `create -> answered p50: pulled after the create ${report.createAnsweredMs.pullAfterCreate.p50} ms vs within it ${report.createAnsweredMs.pullWithinCreate.p50} ms = ${report.answeredRatio}x; ` +
        `create -> time__echo listed: ${report.mcpReadyMs.pullAfterCreate.p50} ms vs ${report.mcpReadyMs.pullWithinCreate.p50} ms = ${report.readyRatio}x`,
    );
    return 0;
  } finally {
    for (const side of sides) {
      await side.gateway.close();
      await side.platform.close({ killSandboxes: true });
      fs.rmSync(side.stateDir, { recursive: true, force: true });
    }
    await registry.close();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`mcp-image-pull-bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
