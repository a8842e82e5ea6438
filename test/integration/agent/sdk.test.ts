/**
 * The unmodified E2B SDK against the agent: directly (the SDK's sandbox URL is the agent), and through the gateway
 * (routing by the SDK's E2b-Sandbox-Id / E2b-Sandbox-Port headers). The agent runs as the runtime ships it (the
 * esbuild bundle of main.ts, a child process) and is configured by POST /init, as the platform does.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryCatalog } from '../../../src/catalog/memory';
import { DEFAULT_AGENT_PORT } from '../../../src/contract/agent-port';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { createUser } from './helpers/common';
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
let user: ReturnType<typeof createUser>;
const sandboxID = `sbx${Math.random().toString(36).slice(2, 10)}`;

beforeAll(async () => {
  dir = scratchDir('agent-sdk-');
  fs.chmodSync(dir, 0o755);
  user = createUser('sksdk', path.join(dir, 'home'));
  fs.mkdirSync(user.home);
  fs.chownSync(user.home, user.uid, user.gid);
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
  user?.remove();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const gatewayUrl = () => `http://127.0.0.1:${gateway.port}`;

describe.each([
  ['directly', () => agent.url],
  ['through the gateway', () => gatewayUrl()],
])('commands %s', (_how, url) => {
  test('run: stdout, stderr, exit code, env from /init and the request, cwd, user; failures raise the SDK errors', async () => {
    const r = await sdkScenario('commands', platform, url(), { cwd: dir, user: user.name }, sandboxID);
    expect(r.basic).toEqual({ stdout: 'out from-init from-request\n/\nroot\n', stderr: 'err\n', exitCode: 0 });
    expect(r.cwd.stdout).toBe(`${dir}\n`);
    expect(r.asUser.stdout).toBe(`${user.name}\n${user.home}\n/\n`); // cwd: /init's default workdir
    expect(r.failed.error).toMatchObject({ name: 'CommandExitError', exitCode: 7, stdout: 'partial\n' });
    expect(r.missing.error).toMatchObject({ name: 'CommandExitError', exitCode: 127 });
    expect(r.missing.error.stderr).toMatch(/no-such-command-xyz: command not found/);
    expect(r.badCwd.error).toMatchObject({ name: 'InvalidArgumentError' });
    expect(r.badCwd.error.message).toMatch(/\/no\/such\/dir/);
    expect(r.badUser.error.message).toMatch(/no-such-user-xyz/);
    expect(r.timeout.error).toMatchObject({ name: 'TimeoutError' });
  }, 60_000);

  test('background: list with config, sendStdin, kill; kill of an unknown pid is false', async () => {
    const r = await sdkScenario('background', platform, url(), {}, sandboxID);
    expect(r.listed).toContainEqual({ pid: r.pid, cmd: '/bin/bash', args: ['-l', '-c', 'cat'] });
    expect(r.seen).toContain('hello stdin');
    expect(r.killed).toBe(true);
    expect(r.result.error).toMatchObject({ name: 'CommandExitError' });
    expect(r.killUnknown).toBe(false);
    expect(r.after).not.toContain(r.pid);
  }, 60_000);

  test('a disconnected command keeps running and is re-attached with connect', async () => {
    const r = await sdkScenario('reattach', platform, url(), {}, sandboxID);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('tick6');
  }, 60_000);
});

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

  test('watchDir sees a file being created', async () => {
    const where = path.join(dir, `watch-${how.replace(/ /g, '-')}`);
    fs.mkdirSync(where);
    const r = await sdkScenario('watch', platform, url(), { dir: where }, sandboxID);
    expect(r.events).toContainEqual({ name: 'created.txt', type: 'create' });
  }, 60_000);
});

test('files written for a user belong to that user', async () => {
  const r = await sdkScenario(
    'run',
    platform,
    agent.url,
    { cmd: `touch ${user.home}/by-user.txt && stat -c %U ${user.home}/by-user.txt`, opts: { user: user.name } },
    sandboxID,
  );
  expect(r.stdout).toBe(`${user.name}\n`);
}, 60_000);
