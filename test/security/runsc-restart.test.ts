/**
 * runsc sandboxes outlive a restart of the platform and are still watched: `sandbox-kit platform --runtime runsc` is
 * killed with SIGKILL and started again over the same state; then a memory hog in a sandbox made before the restart
 * (through the unmodified SDK) ends gVisor's kernel, and the restarted platform must notice it as the first one would
 * have: the sandbox is removed with the reason, the hog's command stream ends instead of waiting on an address that
 * answers nothing, and the other sandbox of before the restart keeps answering. Root only; the platform's own sandbox
 * network on a free /24, its instance named rfx….
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries } from '../../scripts/bundle';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { openSandboxHostNetwork } from '../../src/runtime/network/host-network';
import { waitFor } from '../../src/util/poll';
import { LOWER_ALNUM, randomText } from '../../src/util/random-text';
import { CLI_SOURCE } from '../helpers/cli';
import { freePort } from '../helpers/free-port';
import { bundleForNode } from '../helpers/node-bundle';
import { killPlatformProcess, shutDownLeftRedis, startPlatformProcess, type PlatformProcess } from '../helpers/platform-process';
import { baseRootfs, ROOTFS_TIMEOUT_MS } from '../integration/runtime/helpers/common';
import { SdkDriver } from '../integration/platform/helpers/sdk-driver';

jest.setTimeout(240_000);

/** Inside the project, so the platform finds the agent bundle from the CLI's location as an installed kit does. */
const CLI = join(__dirname, '..', '..', 'dist', 'test-runsc-restart', 'cli.js');
const INSTANCE = `rfx${randomText(LOWER_ALNUM, 6)}`;

let stateDir: string;
let platform: PlatformProcess | undefined;
let sdk: SdkDriver | undefined;
/** What the platform (both runs) wrote to its log. */
let log = '';
/** The API's and the gateway's ports, the same for both runs (as a service restarted in place keeps them). */
let ports: string[];

const start = async () => {
  platform = await startPlatformProcess(CLI, stateDir, ['--runtime', 'runsc', ...ports], (text) => {
    log += text;
    process.stderr.write(text);
  });
  return { apiKey: platform.key, apiUrl: platform.url, sandboxUrl: platform.sandboxUrl };
};

beforeAll(async () => {
  await baseRootfs();
  for (const entry of bundleEntries()) await bundle(entry);
  bundleForNode(CLI_SOURCE, CLI);
  stateDir = await mkdtemp(join(tmpdir(), 'skp-rfx-'));
  fs.writeFileSync(join(stateDir, 'instance'), `${INSTANCE}\n`, { mode: 0o600 });
  ports = ['--port', String(await freePort()), '--gateway-port', String(await freePort())];
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  if (platform) await killPlatformProcess(platform.proc);
  if (!stateDir) return;
  const net = await openSandboxHostNetwork(INSTANCE);
  await cleanupLeftovers({ instance: INSTANCE, dataRoot: join(stateDir, 'runtime'), network: net.network });
  await net.close();
  await shutDownLeftRedis(stateDir);
  fs.rmSync(stateDir, { recursive: true, force: true });
});

const addressOf = async (id: string) =>
  /inet (\d+\.\d+\.\d+\.\d+)\//.exec((await sdk!.call<{ stdout: string }>(id, 'commands.run', 'ip -4 -o addr show dev eth0')).stdout)![1]!;

test('hostile: after a platform restart, a memory hog in a sandbox of before ends it, the platform says why, the other one answers', async () => {
  let opts = await start();
  const hogBox = (await sdk!.create('base', opts)).sandboxId;
  const keeper = (await sdk!.create('base', opts)).sandboxId;
  const address = await addressOf(hogBox);

  await killPlatformProcess(platform!.proc);
  opts = await start();
  // Both kept their containers through the restart and answer through the new platform's gateway (same URLs).
  for (const id of [hogBox, keeper]) expect((await sdk!.call<{ stdout: string }>(id, 'commands.run', 'echo kept')).stdout).toBe('kept\n');

  // 4 GiB at once in a 512 MB sandbox: the host's OOM killer ends gVisor's kernel and the sandbox with it. The
  // command's stream must end then, with no client timeout to end it.
  const hog = sdk!
    .call(hogBox, 'commands.run', `python3 -c "a = b'x' * (4 << 30); print('survived')"`, { timeoutMs: 0, requestTimeoutMs: 0 })
    .then(
      (r) => ({ finished: r }),
      (err: { sdkName?: string; detail?: { message?: string } }) => ({ failed: err }),
    );
  const said = `sandbox ${hogBox} removed (it ran out of memory: its limit is 512 MB)`;
  // Without a watch after the restart nothing says it, and the stream waits on the silent address.
  await waitFor('the restarted platform to remove the sandbox', () => (log.includes(said) ? true : undefined), { timeoutMs: 60_000 });
  // Every connection the host had with it is gone (a new attempt to the dead address, SYN-SENT, is not one of them).
  expect(execFileSync('ss', ['-H', '-t', 'state', 'established', 'dst', address], { encoding: 'utf8' }).trim()).toBe('');
  // The stream ends with the reset, which comes after the sandbox left the gateway's routing: the SDK's health check
  // then gets a 502 at once and the SDK says it was killed (a reset first sent that check to the silent address).
  expect(await hog).toMatchObject({ failed: { detail: { message: expect.stringMatching(/sandbox was killed/) } } });
  await expect(sdk!.static('getInfo', hogBox, opts)).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });

  // The legitimate use beside it: the other sandbox of before the restart goes on.
  expect((await sdk!.call<{ stdout: string }>(keeper, 'commands.run', 'echo still here')).stdout).toBe('still here\n');
  expect(await sdk!.call(keeper, 'kill')).toBe(true);
});
