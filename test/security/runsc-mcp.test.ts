/**
 * A runsc platform gives a sandbox its MCP image server through the create: the unmodified SDK builds a small
 * template holding the `mcp-gateway` command, then runs `Sandbox.create(template, { mcp: { time: {} } })`; the
 * platform fetches the `time` image (from the lab's registry, standing in for Docker Hub) before the sandbox starts,
 * since nothing can be attached to a running gVisor sandbox (src/runtime/runsc.ts, attachesAfterStart), and the MCP
 * SDK client lists and calls the image's tools through the kit's gateway. Root only; one link into the root namespace
 * on a /24 of its own.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import * as os from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_GATEWAY_PORT } from '../../src/contract/mcp';
import type { RunningGateway } from '../../src/gateway';
import { gatewayWrapperScript, GATEWAY_COMMAND_PATH } from '../../src/mcp/template/wrapper';
import type { PlatformOnHost } from '../../src/platform/on-host';
import { bundle, bundleEntries } from '../../scripts/bundle';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../integration/runtime/helpers/common';
import { SdkDriver } from '../integration/platform/helpers/sdk-driver';
import { sandboxTraces, startPlatformAndGateway } from '../integration/platform/helpers/platform-and-gateway';
import { type LabRegistry, pushEverythingImage, startLabRegistry } from '../integration/mcp/helpers/lab-registry';
import { text } from '../integration/mcp/helpers/common';

jest.setTimeout(300_000);

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let registry: LabRegistry;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(os.tmpdir(), 'skp-rfx-mcp-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  // The payload every sandbox has mounted holds the in-sandbox gateway's bundle too.
  await bundle(bundleEntries().find((e) => e.name === 'mcp-gateway')!, join(stateDir, 'bundle'));
  registry = await startLabRegistry();
  pushEverythingImage(registry.host, 'mcp/time:latest');
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, {
    platform: {
      runtime: 'runsc',
      mcpImages: { mirror: registry.host },
    },
  }));
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  await registry?.close();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

test('Sandbox.create({ mcp }) on a runsc platform: the image server is there from the start; the MCP client lists and calls it', async () => {
  expect(platform.runtimeName).toBe('runsc');
  const wrapper = Buffer.from(gatewayWrapperScript()).toString('base64');
  const { templateId } = await sdk.build(
    `rfx-mcp-${Date.now().toString(36)}`,
    `echo ${wrapper} | base64 -d > ${GATEWAY_COMMAND_PATH} && chmod 755 ${GATEWAY_COMMAND_PATH}`,
    opts,
    'root',
  );
  // The SDK starts the sandbox's gateway (`mcp-gateway --config ...`) right after the create answered.
  const { sandboxId } = await sdk.create(templateId, { ...opts, mcp: { time: {} } });
  const mcpToken = await sdk.call<string>(sandboxId, 'getMcpToken');
  const detail = (await (await fetch(`${opts.apiUrl}/sandboxes/${sandboxId}`, { headers: { 'x-api-key': opts.apiKey } })).json()) as {
    envdAccessToken: string;
  };
  const client = new Client({ name: 'runsc-mcp', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${opts.sandboxUrl}/mcp`), {
      requestInit: {
        headers: {
          'E2b-Sandbox-Id': sandboxId,
          'E2b-Sandbox-Port': String(MCP_GATEWAY_PORT),
          'X-Access-Token': detail.envdAccessToken,
          Authorization: `Bearer ${mcpToken}`,
        },
      },
    }),
  );
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['time__echo', 'time__get-sum']));
    expect(text(await client.callTool({ name: 'time__echo', arguments: { message: 'through the create' } }))).toBe(
      'Echo: through the create',
    );
  } finally {
    await client.close();
  }
  // Its image is a layer of the sandbox's root with a /dev of its own (gVisor's device file system), on gVisor's kernel.
  const seen = await sdk.call<{ stdout: string }>(sandboxId, 'commands.run', 'ls /opt/mcp-images/mcp_time/rootfs/dev; uname -r');
  const lines = seen.stdout.trim().split('\n');
  expect(lines.slice(0, -1)).toEqual(expect.arrayContaining(['full', 'null', 'random', 'tty', 'urandom', 'zero']));
  expect(lines.at(-1)).not.toBe(os.release());
  expect(await sdk.call(sandboxId, 'kill')).toBe(true);
  expect(sandboxTraces(platform, stateDir, sandboxId)).toEqual([]);
});
