/**
 * Hostile code inside a sandbox (real crun and runc containers from the cached Debian base, the agent inside),
 * run through the agent's process service as the E2B SDK runs commands: each probe tries to cross a boundary and
 * must fail; beside it, the legitimate use of the same path must still work. Root only; one link into the root
 * namespace on a /24 of its own, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_AGENT_PORT } from '../../src/contract/agent-port';
import type { AgentPayload } from '../../src/runtime/agent-payload';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { createSandboxHostNetwork, type SandboxHostNetwork } from '../../src/runtime/network/host-network';
import { createOciRuntime, type OciSandboxRuntime } from '../../src/runtime/oci-runtime';
import { sandboxPaths } from '../../src/runtime/instance';
import { AGENT_OOM_SCORE_ADJ, CHILD_OOM_SCORE_ADJ } from '../../src/runtime/oom';
import {
  agentRun,
  baseRootfs,
  freshAgentPayload,
  limitsOf,
  ROOTFS_TIMEOUT_MS,
  uniqueName,
  waitForHealth,
} from '../integration/runtime/helpers/common';

jest.setTimeout(180_000);

const port = DEFAULT_AGENT_PORT;
const CONSOLE_CAP = 64 * 1024;
const PIDS_LIMIT = 128;
let rootfs: string;
let scratch: string;
let hostNet: SandboxHostNetwork;
let agent: AgentPayload;

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/sk-security-test-');
  agent = await freshAgentPayload(path.join(scratch, 'bundle'));
  hostNet = await createSandboxHostNetwork(uniqueName('sec'));
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await hostNet?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** x86-64 syscall numbers (perl's syscall() takes numbers); the test host is x86-64. */
const SYSCALL = { keyctl: 250, add_key: 248, bpf: 321, userfaultfd: 323, perf_event_open: 298, io_uring_setup: 425 };
/** `name errno` per call, made with perl (in every Debian, perl-base): EPERM is the filter's answer. */
const syscallProbe = Object.entries(SYSCALL)
  .map(([name, nr]) => `$! = 0; syscall(${nr}, 0, 0, 0, 0, 0); print "${name} ", ($!+0), "\\n";`)
  .join(' ');

describe.each(['crun', 'runc'] as const)('%s', (runtimeName) => {
  let instance: string;
  let rt: OciSandboxRuntime;
  let address: string;
  let pid: number;
  const id = 'sec1';
  const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });
  const asRoot = async (script: string) => agentRun(address, port, '/bin/bash', ['-c', script], 'root');

  beforeAll(async () => {
    instance = uniqueName('s');
    rt = createOciRuntime({
      instance,
      runtime: runtimeName,
      ...roots(),
      network: hostNet.network,
      agent,
      pidsLimit: PIDS_LIMIT,
      consoleLogBytes: CONSOLE_CAP,
    });
    const network = await hostNet.network.attach(id);
    pid = (await rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 256, cpuCount: 1, network })).pid!;
    address = network.address;
    expect(await waitForHealth(address, port)).toBe(204);
  });

  afterAll(async () => {
    await cleanupLeftovers({ instance, ...roots(), network: hostNet.network });
  });

  test('root inside is an unprivileged host id: a user namespace over the shifted range', async () => {
    const r = await asRoot('cat /proc/self/uid_map /proc/self/gid_map; touch /root/made-inside');
    expect(r.stdout.split('\n').map((l) => l.trim().split(/\s+/).join(' '))).toEqual(['0 100000 65536', '0 100000 65536', '']);
    expect(fs.readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/^Uid:\s+100000\s/m);
    expect(fs.statSync(path.join(rt.paths.dataDir, id, 'upper', 'root', 'made-inside')).uid).toBe(100000);
  });

  test('a seccomp filter is on; key rings, BPF, userfaultfd, perf, io_uring answer EPERM', async () => {
    const r = await asRoot(`grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; perl -e '${syscallProbe}'`);
    expect(r.stdout.split('\n')).toEqual(['NoNewPrivs:\t0', 'Seccomp:\t2', ...Object.keys(SYSCALL).map((name) => `${name} 1`), '']);
  });

  test('no nested user namespace, no mount, no new network namespace; root inside has no CAP_SYS_ADMIN', async () => {
    const r = await asRoot(
      'unshare -Ur id -u; echo "unshare-U $?"; unshare -n true; echo "unshare-n $?"; mount -t tmpfs x /mnt; echo "mount $?"; grep CapEff /proc/self/status',
    );
    expect(r.stdout).toMatch(/^unshare-U 1$/m);
    expect(r.stdout).toMatch(/^unshare-n 1$/m);
    expect(r.stdout).toMatch(/^mount 32$/m);
    const capEff = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(r.stdout)![1]}`);
    expect((capEff >> 21n) & 1n).toBe(0n); // CAP_SYS_ADMIN
    expect(r.stderr).toMatch(/unshare failed: Operation not permitted/);
  });

  test('the memory limit cannot be written from inside', async () => {
    const before = limitsOf(pid).memory;
    const r = await asRoot(
      'for f in /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max; do [ -e $f ] && { echo 999999999999 > $f; echo "write $?"; }; done; true',
    );
    expect(r.stdout).toBe('write 1\n');
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(limitsOf(pid).memory).toBe(before);
  });

  test('OOM order: the agent outranks nothing on the host; what it starts outranks the agent', async () => {
    expect(fs.readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim()).toBe(String(AGENT_OOM_SCORE_ADJ));
    expect(Number(fs.readFileSync('/proc/self/oom_score_adj', 'utf8'))).toBeLessThan(AGENT_OOM_SCORE_ADJ);
    const r = await asRoot('cat /proc/self/oom_score_adj; echo -1000 > /proc/self/oom_score_adj; echo "lower $?"');
    expect(r.stdout).toBe(`${CHILD_OOM_SCORE_ADJ}\nlower 1\n`);
  });

  test('a console flood through /proc/1/fd/1 leaves the host-side log within its cap', async () => {
    const log = sandboxPaths(rt.paths, id).log;
    // crun hands the log to the sandbox's root (the write succeeds and is cut); runc leaves it the host's (refused).
    const r = await asRoot('head -c 64M /dev/zero | tr "\\0" x > /proc/1/fd/1; echo "flood $?"');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fs.statSync(log).size).toBeLessThanOrEqual(CONSOLE_CAP);
    if (runtimeName === 'crun') {
      expect(r.stdout).toBe('flood 0\n');
      expect(fs.readFileSync(log, 'utf8').includes('[console log over 65536 bytes: earlier output dropped]\n')).toBe(true);
    } else {
      expect(r.stdout).toBe('flood 1\n');
      expect(r.stderr).toMatch(/Permission denied/);
    }
  });

  test('a sandbox asking for more than the host has is refused by name; nothing is made', async () => {
    const network = await hostNet.network.attach('big1');
    try {
      await expect(rt.create({ sandboxID: 'big1', layers: [rootfs], memoryMB: 65536 * 16, cpuCount: 1, network })).rejects.toThrow(
        /^cannot create sandbox big1: the host cannot take this sandbox: memory: 1048576 MB asked, the host has \d+ MB$/,
      );
      expect(fs.existsSync(path.join(rt.paths.dataDir, 'big1'))).toBe(false);
      expect((await rt.list()).map((s) => s.sandboxID)).toEqual([id]);
    } finally {
      await hostNet.network.detach('big1');
    }
  });

  test('legitimate uses: a setuid program, chown, files owned by the sandbox user, NET_ADMIN in its own namespace', async () => {
    const root = await asRoot(
      'cp /usr/bin/id /usr/local/bin/suid-id && chmod 4755 /usr/local/bin/suid-id && touch /tmp/f && chown user:user /tmp/f && stat -c %U:%G /tmp/f; ip link set lo mtu 1500 && echo netadmin',
    );
    expect(root.stdout).toBe('user:user\nnetadmin\n');
    const user = await agentRun(
      address,
      port,
      '/bin/bash',
      ['-c', 'touch /tmp/mine && stat -c %U /tmp/mine; id -u; /usr/local/bin/suid-id -u'],
      'user',
    );
    expect(user.stdout).toBe('user\n1000\n0\n');
    expect(fs.statSync(path.join(rt.paths.dataDir, id, 'upper', 'tmp', 'mine')).uid).toBe(101000);
  });

  // Last in this sandbox: what the bomb leaves (processes still being reaped) must not starve the tests after it.
  test('a fork bomb stops at the pids limit; the agent keeps answering', async () => {
    // Only shell builtins once the bomb runs (a fork would fail): a fifo read is the sleep.
    const r = await asRoot(
      [
        'mkfifo /tmp/wait; exec 3<>/tmp/wait',
        "setsid bash -c 'bomb() { bomb | bomb & }; bomb' 2>/dev/null &",
        'group=$!',
        'read -t 3 -u 3',
        'for f in /sys/fs/cgroup/pids/pids.current /sys/fs/cgroup/pids.current; do [ -e $f ] && read n < $f && echo $n; done',
        'for i in $(seq 1 20); do kill -KILL -- -$group 2>/dev/null; read -t 0.2 -u 3; done; true',
      ].join('\n'),
    );
    const current = Number(r.stdout.trim().split('\n')[0]);
    expect(current).toBeGreaterThan(PIDS_LIMIT / 2);
    expect(current).toBeLessThanOrEqual(PIDS_LIMIT);
    expect(limitsOf(pid).pids).toBe(String(PIDS_LIMIT));
    expect(await waitForHealth(address, port, 20_000)).toBe(204);
    // Until the last of the bomb is reaped the limit can still be full, and the agent answers that it cannot start a
    // process (EAGAIN; a loaded host once took that long). Once it is reaped, commands run again.
    let alive: string | undefined;
    for (const until = Date.now() + 20_000; alive === undefined; ) {
      try {
        alive = (await asRoot('echo alive')).stdout;
      } catch (err) {
        if (!/EAGAIN/.test(String(err)) || Date.now() > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect(alive).toBe('alive\n');
  });
});
