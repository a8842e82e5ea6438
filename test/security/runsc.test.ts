/**
 * The platform with runtime runsc (gVisor), driven by the unmodified E2B SDK through the real gateway: a sandbox is
 * created, runs commands, writes and reads files, builds a template; the kernel it talks to is gVisor's, not the
 * host's. Hostile probes that a sandbox on crun would take to the host's kernel are answered by gVisor: netlink
 * families the host has (XFRM, sock_diag, generic netlink, audit), the host's kernel log and version, the host's
 * mount table, a listener on the host's 127.0.0.1. Root only; one link into the root namespace on a /24 of its own.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import { join } from 'node:path';
import type { PlatformOnHost } from '../../src/platform/on-host';
import type { RunningGateway } from '../../src/gateway';
import { instancePaths } from '../../src/runtime/instance';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../integration/runtime/helpers/common';
import { SdkDriver } from '../integration/platform/helpers/sdk-driver';
import { waitFor } from '../../src/util/poll';
import { sandboxTraces, startPlatformAndGateway } from '../integration/platform/helpers/platform-and-gateway';

jest.setTimeout(300_000);

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
let sandboxId: string;
/** The platform's log lines, kept to read what it said of a sandbox. */
const platformLog: string[] = [];

/** Netlink protocols by number (linux/netlink.h): each a part of the kernel reachable by one socket() call. */
const NETLINK = { route: 0, sock_diag: 4, xfrm: 6, audit: 9, generic: 16 };
/** `name errno` per protocol (0: the socket was made), with python3 (in the base image and on the host). */
const NETLINK_PROBE = [
  'import socket',
  `for name, proto in ${JSON.stringify(Object.entries(NETLINK))}:`,
  '    try:',
  '        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto).close(); print(name, 0)',
  '    except OSError as e:',
  '        print(name, e.errno)',
].join('\n');
const EPROTONOSUPPORT = 93;

function parseProbe(out: string): Record<string, number> {
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([name, errno]) => [name!, Number(errno)]),
  );
}

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(os.tmpdir(), 'skp-runsc-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, {
    platform: {
      runtime: 'runsc',
      log: (line) => {
        platformLog.push(line);
        process.stderr.write(`platform: ${line}\n`);
      },
    },
  }));
  sdk = await SdkDriver.start();
  sandboxId = (await sdk.create('base', { ...opts, envs: { GREETING: 'hello' } })).sandboxId;
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

const run = (cmd: string, user?: string) =>
  sdk.call<{ stdout: string; stderr: string; exitCode: number }>(sandboxId, 'commands.run', cmd, user ? { user } : {});

test('the platform runs runsc: the sandbox answers commands and file calls of the SDK', async () => {
  expect(platform.runtimeName).toBe('runsc');
  expect((await run('echo "$GREETING from $(whoami)"')).stdout).toBe('hello from user\n');
  await expect(run('echo out; exit 3')).rejects.toMatchObject({ sdkName: 'CommandExitError', detail: { exitCode: 3, stdout: 'out\n' } });

  await sdk.call(sandboxId, 'files.write', '/home/user/note.txt', 'written through the SDK\n');
  expect(await sdk.call(sandboxId, 'files.read', '/home/user/note.txt')).toBe('written through the SDK\n');
  expect((await run('cat /home/user/note.txt; stat -c %U /home/user/note.txt')).stdout).toBe('written through the SDK\nuser\n');
  const entries = await sdk.call<Array<{ name: string }>>(sandboxId, 'files.list', '/home/user');
  expect(entries.map((e) => e.name)).toContain('note.txt');
  // It came from ListDir's native walk (its system calls are gVisor's): the addon is mapped into the agent.
  expect(Number((await run('cat /proc/[0-9]*/maps 2>/dev/null | grep -c native-walk.node; true', 'root')).stdout.trim())).toBeGreaterThan(
    0,
  );
  // `ls` (statx with AT_NO_AUTOMOUNT) is what Debian 12's own runsc build got wrong.
  expect((await run('ls /home/user')).stdout).toContain('note.txt');

  // The file lands in the sandbox's upper dir on the host, owned by the user's id in the shifted range.
  const upper = join(instancePaths(platform.instance, 'runsc', { dataRoot: join(stateDir, 'runtime') }).dataDir, sandboxId, 'upper');
  const onHost = fs.statSync(join(upper, 'home/user/note.txt'));
  expect(fs.readFileSync(join(upper, 'home/user/note.txt'), 'utf8')).toBe('written through the SDK\n');
  expect(onHost.uid).toBe(100_000 + 1000);
});

test("the kernel the sandbox sees is gVisor's: its own version and log, not the host's", async () => {
  const hostRelease = os.release();
  const out = (await run('uname -r; cat /proc/version; dmesg | head -n 1', 'root')).stdout.split('\n');
  expect(out[0]).not.toBe(hostRelease);
  expect(out[1]).not.toContain(hostRelease);
  // gVisor's kernel log; on crun dmesg is refused and the host's log stays unread.
  expect(out[2]).toMatch(/gVisor/);
});

test('hostile: netlink families the host kernel serves are answered by gVisor; route netlink (ip) still works', async () => {
  const onHost = parseProbe(execFileSync('python3', ['-c', NETLINK_PROBE], { encoding: 'utf8' }));
  // On the host's kernel (a crun sandbox's seccomp profile lets socket() through) every one of them exists.
  expect(onHost).toEqual({ route: 0, sock_diag: 0, xfrm: 0, audit: 0, generic: 0 });
  const inside = parseProbe((await run(`python3 -c '${NETLINK_PROBE}'`, 'root')).stdout);
  expect(inside).toEqual({ route: 0, sock_diag: EPROTONOSUPPORT, xfrm: EPROTONOSUPPORT, audit: EPROTONOSUPPORT, generic: EPROTONOSUPPORT });
  expect((await run('ip -4 -o addr show dev eth0', 'root')).stdout).toMatch(/inet \d+\.\d+\.\d+\.\d+\//);
});

test("hostile: the host's mount table and a listener on the host's 127.0.0.1 are out of reach", async () => {
  const canary = `canary-${Date.now()}`;
  const server = net.createServer((s) => s.end(canary));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const probe = await run(
      `cat /proc/self/mountinfo; timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3' || echo "loopback refused"`,
      'root',
    );
    expect(probe.stdout).not.toContain(canary);
    expect(probe.stdout).toContain('loopback refused');
    // No host path of the sandbox's layers or upper dir shows through.
    expect(probe.stdout).not.toContain(stateDir);
    expect(probe.stdout).not.toMatch(/upperdir=|lowerdir=/);
  } finally {
    server.close();
  }
});

test('a template builds with its RUN step on runsc too, and a sandbox from it runs on runsc', async () => {
  const { templateId } = await sdk.build(
    `runsc-${Date.now().toString(36)}`,
    'echo built > /home/user/built-on && uname -r > /home/user/built-kernel',
    opts,
  );
  const s = await sdk.create(templateId, opts);
  expect(await sdk.call<string>(s.sandboxId, 'files.read', '/home/user/built-on')).toBe('built\n');
  // The step ran on gVisor's kernel, not the host's.
  expect((await sdk.call<string>(s.sandboxId, 'files.read', '/home/user/built-kernel')).trim()).not.toBe(os.release());
  const uname = await sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'uname -r');
  expect(uname.stdout.trim()).not.toBe(os.release());
  expect(await sdk.call(s.sandboxId, 'kill')).toBe(true);
  expect(sandboxTraces(platform, stateDir, s.sandboxId)).toEqual([]);
});

test('hostile: a memory hog past its limit ends its own sandbox at once and the platform says why; a process within the limit runs', async () => {
  // The legitimate use: 200 MiB in a 512 MB sandbox.
  const within = await run(`python3 -c "a = b'x' * (200 << 20); print(len(a))"`);
  expect(within.stdout.trim()).toBe(String(200 << 20));

  const hogBox = (await sdk.create('base', opts)).sandboxId;
  const address = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(
    (await sdk.call<{ stdout: string }>(hogBox, 'commands.run', 'ip -4 -o addr show dev eth0')).stdout,
  )![1]!;
  // 4 GiB written at once. gVisor's kernel holds the application's memory, so the host's OOM killer can only end it
  // and the sandbox with it; the command's stream must end then, not wait on a network stack that is gone (no
  // client timeout here).
  const hog = sdk
    .call(hogBox, 'commands.run', `python3 -c "a = b'x' * (4 << 30); print('survived')"`, { timeoutMs: 0, requestTimeoutMs: 0 })
    .then(
      (r) => ({ finished: r }),
      (err: { sdkName?: string; detail?: { message?: string } }) => ({ failed: err }),
    );

  // The platform removed it and said why; by then no connection of the host waits on the sandbox's address.
  const said = `sandbox ${hogBox} removed (it ran out of memory: its limit is 512 MB)`;
  await waitFor('the platform to remove the sandbox', () => platformLog.find((l) => l.includes(said)), { timeoutMs: 60_000 });
  expect(execFileSync('ss', ['-H', '-t', 'dst', address], { encoding: 'utf8' }).trim()).toBe('');
  const ended = await hog;
  expect(ended).toMatchObject({ failed: { detail: { message: expect.stringMatching(/sandbox was killed/) } } });
  await expect(sdk.static('getInfo', hogBox, opts)).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
  expect(sandboxTraces(platform, stateDir, hogBox)).toEqual([]);
  // The other sandbox, the platform and the host go on.
  expect((await run('echo still here')).stdout).toBe('still here\n');
});

test("a kill resets the host's kept-alive connections to the sandbox: its address, given to the next sandbox, never meets a stale one", async () => {
  const box = (await sdk.create('base', opts)).sandboxId;
  const address = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(
    (await sdk.call<{ stdout: string }>(box, 'commands.run', 'ip -4 -o addr show dev eth0')).stdout,
  )![1]!;
  // A connection held open to the agent, as the platform's and the gateway's pools hold them.
  const held = net.connect({ host: address, port: 49983 });
  await new Promise<void>((resolve, reject) => held.once('connect', resolve).once('error', reject));
  let closed = false;
  held.once('close', () => {
    closed = true;
  });
  held.on('error', () => undefined);
  expect(await sdk.static('kill', box, opts)).toBe(true);
  // gVisor's network stack sends nothing as it goes; without the runtime's reset this waits until the bound.
  await waitFor('the held connection to end', () => (closed ? true : undefined), { timeoutMs: 30_000 });
  expect(execFileSync('ss', ['-H', '-t', 'dst', address], { encoding: 'utf8' }).trim()).toBe('');
  // The legitimate use beside it: a new sandbox answers at once.
  expect((await run('echo still here')).stdout).toBe('still here\n');
});
