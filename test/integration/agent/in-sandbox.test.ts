/**
 * The agent where it really runs: the runtime's bundle under tini in a crun container from the cached Debian base
 * (minbase tools only: setpriv, script, stty), /init'ed like the platform does, driven by the unmodified SDK and by
 * the Connect client: users from the image, the OOM score the runtime names, a pty, files, and the SDK's commands
 * (which run in a login shell, `bash -l`: the sandbox's own profile, never the host's) directly and through the
 * gateway. Root only; puts one link into the root namespace on a /24 of its own, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MemoryCatalog } from '../../../src/catalog/memory';
import { DEFAULT_AGENT_PORT } from '../../../src/contract/agent-port';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { Process } from '../../../src/contract/gen/process_pb';
import { cleanupLeftovers } from '../../../src/runtime/cleanup';
import { createSandboxHostNetwork, type SandboxHostNetwork } from '../../../src/runtime/network/host-network';
import { createOciRuntime, type OciSandboxRuntime } from '../../../src/runtime/oci-runtime';
import { CHILD_OOM_SCORE_ADJ } from '../../../src/runtime/oom';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS, uniqueName, waitForHealth } from '../runtime/helpers/common';
import { initAgent, platformStandIn, type PlatformStandIn, sdkScenario } from './helpers/sdk';

jest.setTimeout(120_000);

const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;
let scratch: string;
let hostNet: SandboxHostNetwork;
let rt: OciSandboxRuntime;
let instance: string;
let platform: PlatformStandIn;
let url: string;
let gateway: RunningGateway;
const id = 'agentin1';
const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });

beforeAll(async () => {
  const rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/sk-agent-sandbox-');
  const agent = await freshAgentPayload(path.join(scratch, 'bundle'));
  hostNet = await createSandboxHostNetwork(uniqueName('ag'));
  instance = uniqueName('a');
  rt = createOciRuntime({ instance, runtime: 'crun', ...roots(), network: hostNet.network, agent });
  const network = await hostNet.network.attach(id);
  await rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 256, cpuCount: 1, network });
  expect(await waitForHealth(network.address, DEFAULT_AGENT_PORT)).toBe(204);
  url = `http://${network.address}:${DEFAULT_AGENT_PORT}`;
  expect((await initAgent(url, { accessToken: TOKEN, defaultUser: 'user', envVars: { FOO: 'from-init' } })).status).toBe(204);
  platform = await platformStandIn(TOKEN);
  const catalog = new MemoryCatalog([{ sandboxID: id, host: network.address, agentPort: DEFAULT_AGENT_PORT, token: TOKEN }]);
  gateway = await startGateway({ catalog, brand: 'Svc' });
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await gateway?.close();
  await platform?.close();
  if (scratch) await cleanupLeftovers({ instance, ...roots(), network: hostNet.network }).catch(() => undefined);
  await hostNet?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

test("commands run as the default user from /init, with its home, /init's env, and the OOM score the runtime names", async () => {
  const r = await sdkScenario('run', platform, url, { cmd: 'id -un; id -G; echo $HOME $FOO; pwd; cat /proc/self/oom_score_adj' }, id);
  const [name, , env, cwd, oom] = r.stdout.split('\n');
  expect(name).toBe('user');
  expect(env).toBe('/home/user from-init');
  expect(cwd).toBe('/home/user');
  expect(oom).toBe(String(CHILD_OOM_SCORE_ADJ));
  const asRoot = await sdkScenario('run', platform, url, { cmd: 'id -u; cat /proc/self/oom_score_adj', opts: { user: 'root' } }, id);
  expect(asRoot.stdout).toBe(`0\n${CHILD_OOM_SCORE_ADJ}\n`);
});

test('a pty of the requested size, resized by Update', async () => {
  const client = createClient(
    Process,
    createConnectTransport({
      baseUrl: url,
      httpVersion: '1.1',
      useBinaryFormat: false,
      interceptors: [(next) => (req) => (req.header.set('x-access-token', TOKEN), next(req))],
    }),
  );
  let out = '';
  let pid = 0;
  let resized = false;
  for await (const r of client.start({
    process: { cmd: '/bin/bash', args: ['-c', 'stty size; read l; stty size'], envs: { TERM: 'xterm' } },
    pty: { size: { cols: 90, rows: 20 } },
    stdin: true,
  })) {
    const e = r.event!.event;
    if (e.case === 'start') pid = e.value.pid;
    if (e.case === 'data' && e.value.output.case === 'pty') out += Buffer.from(e.value.output.value).toString();
    if (!resized && out.includes('20 90')) {
      resized = true;
      const sel = { selector: { case: 'pid' as const, value: pid } };
      await client.update({ process: sel, pty: { size: { cols: 132, rows: 43 } } });
      await client.sendInput({ process: sel, input: { input: { case: 'pty', value: Buffer.from('x\n') } } });
    }
  }
  expect(out).toMatch(/20 90[\s\S]*43 132/);
});

test('files written through the SDK belong to the user and read back', async () => {
  const r = await sdkScenario('files', platform, url, { dir: '/home/user/sdk' }, id);
  expect(r.text).toBe('hello text');
  expect(r.bigEqual).toBe(true);
  const owner = await sdkScenario('run', platform, url, { cmd: 'stat -c %U /home/user/sdk/big.dat' }, id);
  expect(owner.stdout).toBe('user\n');
  // The listing came from ListDir's native walk: its addon (beside the agent's bundle) is mapped into the agent.
  const maps = await sdkScenario(
    'run',
    platform,
    url,
    { cmd: 'cat /proc/[0-9]*/maps 2>/dev/null | grep -c native-walk.node; true', opts: { user: 'root' } },
    id,
  );
  expect(Number(maps.stdout.trim())).toBeGreaterThan(0);
});

describe.each([
  ['directly', () => url],
  ['through the gateway', () => `http://127.0.0.1:${gateway.port}`],
])('commands %s', (_how, via) => {
  test('run: stdout, stderr, exit code, env from /init and the request, cwd, user; failures raise the SDK errors', async () => {
    const r = await sdkScenario('commands', platform, via(), { cwd: '/tmp', user: 'root' }, id);
    expect(r.basic).toEqual({ stdout: 'out from-init from-request\n/home/user\nuser\n', stderr: 'err\n', exitCode: 0 });
    expect(r.cwd.stdout).toBe('/tmp\n');
    expect(r.asUser.stdout).toBe('root\n/root\n/root\n');
    expect(r.failed.error).toMatchObject({ name: 'CommandExitError', exitCode: 7, stdout: 'partial\n' });
    expect(r.missing.error).toMatchObject({ name: 'CommandExitError', exitCode: 127 });
    expect(r.missing.error.stderr).toMatch(/no-such-command-xyz: command not found/);
    expect(r.badCwd.error).toMatchObject({ name: 'InvalidArgumentError' });
    expect(r.badCwd.error.message).toMatch(/\/no\/such\/dir/);
    expect(r.badUser.error.message).toMatch(/no-such-user-xyz/);
    expect(r.timeout.error).toMatchObject({ name: 'TimeoutError' });
  });

  test('background: list with config, sendStdin, kill; kill of an unknown pid is false', async () => {
    const r = await sdkScenario('background', platform, via(), {}, id);
    expect(r.listed).toContainEqual({ pid: r.pid, cmd: '/bin/bash', args: ['-l', '-c', 'cat'] });
    expect(r.seen).toContain('hello stdin');
    expect(r.killed).toBe(true);
    expect(r.result.error).toMatchObject({ name: 'CommandExitError' });
    expect(r.killUnknown).toBe(false);
    expect(r.after).not.toContain(r.pid);
  });

  test('a disconnected command keeps running and is re-attached with connect', async () => {
    const r = await sdkScenario('reattach', platform, via(), {}, id);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('tick6');
  });
});
