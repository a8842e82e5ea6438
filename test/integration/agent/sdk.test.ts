/**
 * The unmodified E2B SDK against the agent: directly (the SDK's sandbox URL is the agent), and through the gateway
 * (routing by the SDK's E2b-Sandbox-Id / E2b-Sandbox-Port headers). The agent runs as the runtime ships it (the
 * esbuild bundle of main.ts, a child process on the host) and is configured by POST /init, as the platform does.
 * The SDK runs commands in a login shell (`bash -l`), so the commands are tested where that shell belongs, in a
 * sandbox (in-sandbox.test.ts); here the host's shell profiles are tripwires (helpers/common.ts spawnAgent).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryCatalog } from '../../../src/catalog/memory';
import { DEFAULT_AGENT_PORT } from '../../../src/contract/agent-port';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import {
  type AgentChild,
  bundledAgent,
  initAgent,
  platformStandIn,
  type PlatformStandIn,
  runAgentChild,
  scratchDir,
  sdkScenario,
} from './helpers/sdk';

const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;
let dir: string;
let agent: AgentChild;
let platform: PlatformStandIn;
let gateway: RunningGateway;
const sandboxID = `sbx${Math.random().toString(36).slice(2, 10)}`;

beforeAll(async () => {
  dir = scratchDir('agent-sdk-');
  // A loopback address of its own, so the agent can listen on the port the SDK names (49983) without colliding.
  const host = `127.${20 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  agent = await runAgentChild(await bundledAgent(dir), ['--host', host, '--port', String(DEFAULT_AGENT_PORT), '--default-user', 'root']);
  agent.url = `http://${host}:${DEFAULT_AGENT_PORT}`;
  const init = await initAgent(agent.url, { accessToken: TOKEN, envVars: { FOO: 'from-init' }, defaultUser: 'root', defaultWorkdir: '/' });
  expect(init.status).toBe(204);
  platform = await platformStandIn(TOKEN);
  const catalog = new MemoryCatalog([{ sandboxID, host, agentPort: DEFAULT_AGENT_PORT, token: TOKEN }]);
  gateway = await startGateway({ catalog, brand: 'Svc' });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await agent?.stop();
  await platform?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const gatewayUrl = () => `http://127.0.0.1:${gateway.port}`;

describe.each([
  ['directly', () => agent.url],
  ['through the gateway', () => gatewayUrl()],
])('files %s', (how, url) => {
  test('write/read text, binary and 100 MB; multi-file write; makeDir, rename, remove, exists, list; metadata', async () => {
    const where = path.join(dir, `files-${how.replace(/ /g, '-')}`);
    fs.mkdirSync(where);
    const r = await sdkScenario('files', platform, url(), { dir: where }, sandboxID);
    expect(r.text).toBe('hello text');
    expect(r.binaryEqual).toBe(true);
    expect(r.bigEqual).toBe(true);
    expect(r.bigInfo).toEqual({ path: path.join(where, 'big.dat'), name: 'big.dat' });
    expect(r.multi).toEqual([path.join(where, 'multi/a.txt'), path.join(where, 'multi/b.txt')]);
    expect(r.made).toBe(true);
    expect(r.madeAgain).toBe(false);
    expect(r.renamed).toEqual({ path: path.join(where, 'renamed.txt'), name: 'renamed.txt' });
    expect([r.existsOld, r.existsNew, r.existsRemoved]).toEqual([false, true, false]);
    // Removing what is already gone succeeds, as on E2B.
    expect(r.removedAgain).toEqual({});
    expect(r.listing).toEqual(
      expect.arrayContaining([
        { name: 'big.dat', type: 'file' },
        { name: 'made', type: 'dir' },
        { name: 'multi', type: 'dir' },
      ]),
    );
    expect(r.missing.error).toMatchObject({ name: 'FileNotFoundError' });
    expect(r.withMeta.ok).toBeDefined();
    expect(r.metaInfo.metadata).toEqual({ color: 'blue' });
    expect(fs.readFileSync(path.join(where, 'multi/a.txt'), 'utf8')).toBe('A');
    // Nothing but the written files: no temporary upload files are left behind.
    expect(fs.readdirSync(where).filter((n) => n.includes('.upload'))).toEqual([]);
  }, 120_000);

  test('watchDir reports create, write (a rewrite by the SDK, an append by another process), chmod and remove by their names', async () => {
    const where = path.join(dir, `watch-${how.replace(/ /g, '-')}`);
    fs.mkdirSync(where);
    const r = await sdkScenario('watch', platform, url(), { dir: where }, sandboxID);
    const types = r.events.filter((e: { name: string }) => e.name === 'created.txt').map((e: { type: string }) => e.type);
    expect(types[0]).toBe('create');
    expect(types.filter((t: string) => t === 'write').length).toBeGreaterThanOrEqual(2);
    expect(types).toContain('chmod');
    expect(types.at(-1)).toBe('remove');
    // The upload's temporary file is the agent's own business: never reported.
    expect(r.events.filter((e: { name: string }) => e.name.endsWith('.upload'))).toEqual([]);
  }, 60_000);
});
