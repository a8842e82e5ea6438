/**
 * The mcp-gateway template built for real by the kit's template service with the unmodified E2B SDK (Debian, npm
 * from the registry), then the SDK's own command run inside it with the kit's payload mounted as in a sandbox:
 * `mcp-gateway --config ...` starts the preinstalled reference servers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { freePort } from '../../helpers/free-port';
import { startTemplatePlatform, API_KEY, type TemplatePlatform } from '../platform/templates/helpers/template-platform';
import { runScript } from './helpers/node-script';
import { REPO, tempDir } from './helpers/common';

jest.setTimeout(900_000);

let platform: TemplatePlatform;
const payload = tempDir('sk-mcp-payload');

beforeAll(async () => {
  platform = await startTemplatePlatform({ stepTimeoutMs: 600_000 });
  fs.mkdirSync(path.join(payload, 'bundle'));
  await build({
    entryPoints: [path.join(REPO, 'src/mcp/gateway/main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    outfile: path.join(payload, 'bundle', 'mcp-gateway.js'),
    logLevel: 'warning',
  });
});

afterAll(async () => {
  await platform?.stop();
  fs.rmSync(payload, { recursive: true, force: true });
});

test('the SDK builds mcp-gateway; in it, mcp-gateway --config starts filesystem, memory, everything and sequential thinking', async () => {
  const alias = `mcp-gateway-${Date.now().toString(36)}`;
  const result = await runScript(path.join(__dirname, 'helpers', 'build-template.ts'), [platform.url, API_KEY, alias], {}, 800_000);
  const messages = result.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { t: string; message?: string });
  const logs = messages.filter((m) => m.t === 'log').map((m) => m.message);
  const failed = messages.find((m) => m.t === 'error');
  if (failed || !messages.some((m) => m.t === 'done'))
    throw new Error(`build failed: ${failed?.message ?? result.stderr}\n${logs.slice(-30).join('\n')}`);
  expect(logs.some((l) => /RUN curl -fsSL https:\/\/registry\.npmjs\.org\/npm/.test(l ?? ''))).toBe(true);

  const template = await platform.service.resolve(alias);
  if (!template) throw new Error(`template ${alias} not found after the build`);
  const port = await freePort();
  const config = JSON.stringify({ filesystem: { paths: ['/tmp'] }, memory: {}, everything: {}, sequentialthinking: {} });
  const layerDir = fs.mkdtempSync(path.join(platform.dataDir, 'mcp-run-'));
  fs.chmodSync(layerDir, 0o755);
  const lines: string[] = [];
  const code = await platform.executor.run({
    layers: template.layers,
    layerDir,
    // What the SDK runs, then the gateway's own status view of its servers.
    argv: [
      '/bin/bash',
      '-c',
      `mcp-gateway --config '${config}' --port ${port} --host 127.0.0.1 && mcp-gateway status --port ${port} && stat -c '%a %U' /etc/mcp-gateway/.token`,
    ],
    user: 'root',
    workdir: '/',
    env: {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: '/root',
      GATEWAY_ACCESS_TOKEN: 'template-test-token',
    },
    binds: [
      { source: path.join(payload, 'bundle'), target: '/opt/sandbox-kit/bundle' },
      { source: process.execPath, target: '/opt/sandbox-kit/node' },
    ],
    network: 'egress',
    memoryMB: 1024,
    cpuCount: 1,
    timeoutMs: 120_000,
    onLine: (_stream, line) => lines.push(line),
  });
  const out = lines.join('\n');
  expect({ code, out }).toMatchObject({ code: 0 });
  expect(out).toMatch(
    /serving filesystem \(\d+ tools\), memory \(\d+ tools\), everything \(\d+ tools\), sequentialThinking \(1 tools\) on port/,
  );
  const status = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as { servers: { name: string; state: string }[] };
  expect(status.servers.map((s) => `${s.name}:${s.state}`)).toEqual([
    'filesystem:ready',
    'memory:ready',
    'everything:ready',
    'sequentialThinking:ready',
  ]);
  expect(out).toContain('600 root');
});
