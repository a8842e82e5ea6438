/**
 * Sandboxes as real crun and runc containers from the cached Debian base, with the agent inside, on a standalone
 * sandbox network: limits, network namespace, pause/resume at HTTP level, an OOM inside, kill and crash cleanup.
 * Root only; puts one link into the root namespace on a /24 of its own, so it runs beside the other test files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_AGENT_PORT } from '../../../src/contract/agent-port';
import type { AgentPayload } from '../../../src/runtime/agent-payload';
import { cleanupLeftovers } from '../../../src/runtime/cleanup';
import { createSandboxHostNetwork, openSandboxHostNetwork, type SandboxHostNetwork } from '../../../src/runtime/network/host-network';
import { AdmissionError } from '../../../src/runtime/admission';
import { createOciRuntime, type OciSandboxRuntime } from '../../../src/runtime/oci-runtime';
import { CHILD_OOM_SCORE_ADJ } from '../../../src/runtime/oom';
import { diskImagePath } from '../../../src/runtime/sandbox-disk';
import { sandboxPaths } from '../../../src/runtime/instance';
import { SECCOMP_BPF_ANNOTATION } from '../../../src/runtime/seccomp-bpf';
import { createStepExecutor } from '../../../src/runtime/step-executor';
import { exec } from '../../../src/util/exec';
import { waitFor } from '../../../src/util/poll';
import {
  agentRun,
  baseRootfs,
  freshAgentPayload,
  httpStatus,
  instanceCgroups,
  limitsOf,
  oomKills,
  ROOTFS_TIMEOUT_MS,
  tcpConnects,
  tracesOf,
  uniqueName,
  waitForHealth,
} from './helpers/common';
import { testRuntimes } from '../../helpers/test-runtime';

jest.setTimeout(120_000);

let rootfs: string;
let scratch: string;
let hostNet: SandboxHostNetwork;
let agent: AgentPayload;
const port = DEFAULT_AGENT_PORT;

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/sk-runtime-test-');
  agent = await freshAgentPayload(path.join(scratch, 'bundle'));
  hostNet = await createSandboxHostNetwork(uniqueName('rt'));
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await hostNet?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe.each(testRuntimes(['crun', 'runc']))('%s', (runtimeName) => {
  let instance: string;
  let rt: OciSandboxRuntime;
  const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });

  beforeEach(() => {
    instance = uniqueName('t');
    rt = createOciRuntime({ instance, runtime: runtimeName, ...roots(), network: hostNet.network, agent });
  });

  afterEach(async () => {
    await cleanupLeftovers({ instance, ...roots(), network: hostNet.network });
  });

  const traces = (id: string, pid?: number) =>
    tracesOf({
      instance,
      sandboxID: id,
      stateDir: rt.paths.stateDir,
      dataDir: rt.paths.dataDir,
      netns: `${hostNet.namespace.replace(/\.host$/, '')}-${id}`,
      ...(pid ? { pid } : {}),
    });

  const addresses = new Map<string, string>();

  async function start(id: string, memoryMB = 256) {
    const network = await hostNet.network.attach(id);
    const status = await rt.create({ sandboxID: id, layers: [rootfs], memoryMB, cpuCount: 1, network });
    expect(await waitForHealth(network.address, port)).toBe(204);
    addresses.set(id, network.address);
    return { network, status };
  }

  /** A script as root through the agent (runc 1.1 cannot `exec` into a container that joined its user namespace). */
  async function inside(id: string, script: string) {
    return agentRun(addresses.get(id)!, port, '/bin/sh', ['-c', script], 'root');
  }

  test('create runs the agent under tini with the limits, the network namespace and the /etc files; kill leaves nothing', async () => {
    expect(rt.name).toBe(runtimeName);
    const id = 'life1';
    const { network, status } = await start(id);
    expect(status.state).toBe('running');
    const pid = status.pid!;
    expect(traces(id, pid).length).toBeGreaterThan(0);

    // cgroup v1 shows quota and period in two files (joined here), cgroup v2 in cpu.max: the same text either way.
    expect(limitsOf(pid)).toEqual({ memory: String(256 * 1024 * 1024), cpu: '100000 100000', pids: '4096' });
    expect(fs.readlinkSync(`/proc/${pid}/ns/net`)).toBe(`net:[${fs.statSync(network.netnsPath).ino}]`);
    // The container's first process: tini on the host's kernel; under runsc, gVisor's kernel (tini runs inside it).
    expect(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]).toBe(
      runtimeName === 'runsc' ? 'runsc-sandbox' : '/opt/sandbox-kit/tini',
    );

    const etc = await inside(
      id,
      'hostname; grep -cE "^' +
        network.address +
        '\\s+' +
        id +
        '$" /etc/hosts; id -u user; ls -d /home/user /root /tmp; touch /tmp/x /home/user/y /root/z && echo writable',
    );
    expect(etc.stdout.split('\n')).toEqual([id, '1', '1000', '/home/user', '/root', '/tmp', 'writable', '']);
    // The agent (the parent of what it runs) runs the bundle through its loader, with its heap flags.
    const agentArgs = (await inside(id, 'tr "\\0" " " < /proc/$PPID/cmdline')).stdout;
    expect(agentArgs).toContain(' --max-semi-space-size=1 --max-old-space-size=96 /opt/sandbox-kit/bundle/run.js agent ');

    expect(await rt.status(id)).toEqual({ sandboxID: id, state: 'running', pid });
    expect((await rt.list()).map((s) => s.sandboxID)).toEqual([id]);

    await rt.kill(id);
    expect(traces(id, pid)).toEqual([]);
    expect(instanceCgroups(instance)).toEqual([]);
    expect(await rt.status(id)).toBeUndefined();
    expect(await httpStatus(`http://${network.address}:${port}/health`, 500)).not.toBe(204);
    await rt.kill(id); // idempotent
  });

  test("a build step leaves the instance's parent cgroup; releaseCgroupParent removes it once nothing runs, not before", async () => {
    await start('par1');
    const steps = createStepExecutor({ instance, runtime: runtimeName, ...roots() });
    const layerDir = fs.mkdtempSync(path.join(scratch, 'layer-'));
    const step = { layers: [rootfs], layerDir, argv: ['/bin/true'], user: 'root', workdir: '/', env: {}, network: 'none' as const };
    expect(await steps.run({ ...step, memoryMB: 128, cpuCount: 1, timeoutMs: 20_000, onLine: () => undefined })).toBe(0);
    // A sandbox still runs: its cgroup is the parent's child, and the parent stays.
    rt.releaseCgroupParent();
    expect(instanceCgroups(instance).length).toBeGreaterThan(0);
    expect(await httpStatus(`http://${addresses.get('par1')}:${port}/health`)).toBe(204);
    await rt.kill('par1');
    // The kill found the instance idle and removed the parent; a step run after it leaves the parent again.
    expect(instanceCgroups(instance)).toEqual([]);
    expect(await steps.run({ ...step, memoryMB: 128, cpuCount: 1, timeoutMs: 20_000, onLine: () => undefined })).toBe(0);
    expect(instanceCgroups(instance).length).toBeGreaterThan(0);
    rt.releaseCgroupParent();
    expect(instanceCgroups(instance)).toEqual([]);
    await steps.close();
  });

  const crunTest = runtimeName === 'crun' ? test : undefined;
  crunTest?.('the seccomp program crun compiled for the first sandbox is loaded by the next, and still refuses', async () => {
    await start('bpf1');
    expect(JSON.parse(fs.readFileSync(sandboxPaths(rt.paths, 'bpf1').config, 'utf8')).annotations).toBeUndefined();
    const compiled = fs.readFileSync(path.join(rt.cli.stateDir, 'bpf1', 'seccomp.bpf'));
    await start('bpf2');
    const config = JSON.parse(fs.readFileSync(sandboxPaths(rt.paths, 'bpf2').config, 'utf8'));
    expect(config.annotations).toEqual({ [SECCOMP_BPF_ANNOTATION]: compiled.toString('base64') });
    expect(fs.readFileSync(path.join(rt.cli.stateDir, 'bpf2', 'seccomp.bpf'))).toEqual(compiled);
    const r = await inside('bpf2', 'unshare -U true; echo "unshare-U $?"; grep Seccomp: /proc/self/status');
    expect(r.stdout).toMatch(/^unshare-U 1$/m);
    expect(r.stdout).toMatch(/^Seccomp:\s+2$/m);
    await rt.kill('bpf1');
    await rt.kill('bpf2');
  });

  test('pause freezes the agent (TCP still connects, HTTP times out); resume answers again', async () => {
    const id = 'pause1';
    const { network } = await start(id);
    await rt.pause(id);
    expect((await rt.status(id))?.state).toBe('paused');
    expect(await tcpConnects(network.address, port)).toBe(true);
    expect(await httpStatus(`http://${network.address}:${port}/health`, 700)).toBe('timeout');
    await rt.resume(id);
    expect((await rt.status(id))?.state).toBe('running');
    expect(await waitForHealth(network.address, port, 5000)).toBe(204);
    await rt.pause(id);
    await rt.kill(id); // a paused sandbox is killed too
    expect(traces(id)).toEqual([]);
  });

  // On the host's kernel only: under runsc an OOM ends the whole sandbox (gVisor has no OOM killer of its own;
  // docs/runtime.md#runsc; test/security/runsc.test.ts covers that).
  const oomTest = runtimeName === 'runsc' ? undefined : test;
  oomTest?.('an OOM inside kills the memory hog; the agent keeps answering', async () => {
    const id = 'oom1';
    const { network, status } = await start(id, 128);
    // What the agent does for every process it starts: raise its oom_score_adj (no privilege needed).
    const adj = await inside(id, `sleep 30 & echo ${CHILD_OOM_SCORE_ADJ} > /proc/$!/oom_score_adj && cat /proc/$!/oom_score_adj; kill $!`);
    expect(adj.stdout.trim()).toBe(String(CHILD_OOM_SCORE_ADJ));
    const hog = await inside(
      id,
      `echo ${CHILD_OOM_SCORE_ADJ} > /proc/self/oom_score_adj; head -c 400M /dev/zero | tail; echo "tail exit $?"`,
    );
    expect(hog.stdout).toContain('tail exit 137');
    expect(oomKills(status.pid!)).toBeGreaterThanOrEqual(1);
    expect(await waitForHealth(network.address, port, 3000)).toBe(204);

    // The same through the agent: what it starts gets the runtime's CHILD_OOM_SCORE_ADJ and dies first.
    const viaAgent = await agentRun(network.address, port, '/bin/sh', [
      '-c',
      'cat /proc/self/oom_score_adj; head -c 400M /dev/zero | tail; echo "tail exit $?"',
    ]);
    expect(viaAgent.stdout).toBe(`${CHILD_OOM_SCORE_ADJ}\ntail exit 137\n`);
    expect(oomKills(status.pid!)).toBeGreaterThanOrEqual(2);
    expect(await waitForHealth(network.address, port, 3000)).toBe(204);
    expect((await rt.status(id))?.state).toBe('running');
    await rt.kill(id);
  });

  /** Whether `pid` is a descendant of this test's process (not another test's on the same machine). */
  function ofThisTest(pid: string): boolean {
    for (let p = pid, hops = 0; p !== '0' && p !== '1' && hops < 64; hops++) {
      if (p === String(process.pid)) return true;
      p =
        fs
          .readFileSync(`/proc/${p}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1] ?? '0';
    }
    return false;
  }

  /** This test's processes in another mount namespace than its own that have the mount on `dir`. */
  function holdersElsewhere(dir: string): number[] {
    const ours = fs.readlinkSync('/proc/self/ns/mnt');
    const held: number[] = [];
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/ns/mnt`) === ours || !ofThisTest(pid)) continue;
        if (
          fs
            .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
            .split('\n')
            .some((l) => l.split(' ')[4] === dir)
        )
          held.push(Number(pid));
      } catch {
        // gone
      }
    }
    return held;
  }

  /** The loop devices backed by `image` (losetup -j). */
  async function loopsOf(image: string): Promise<string> {
    return (await exec(['losetup', '-j', image])).stdout.trim();
  }

  test("a runtime call in flight does not hold another sandbox's disk: stop and kill unmount it and free its loop device at once", async () => {
    await start('disk1');
    await start('disk2');
    const bundles = ['disk1', 'disk2'].map((id) => path.join(rt.paths.dataDir, id));
    const images = bundles.map(diskImagePath);
    for (const image of images) expect(await loopsOf(image)).not.toBe('');

    // A long runtime call: a build step, in its mount namespace, until the test opens its gate.
    const gate = fs.mkdtempSync(path.join(scratch, 'gate-'));
    fs.chmodSync(gate, 0o755); // the step's root is a mapped uid
    const layer = fs.mkdtempSync(path.join(scratch, 'layer-'));
    const lines: string[] = [];
    const done = createStepExecutor({ instance, runtime: runtimeName, ...roots() }).run({
      layers: [rootfs],
      layerDir: layer,
      argv: ['/bin/sh', '-c', 'echo waiting; while [ ! -e /gate/open ]; do sleep 0.1; done'],
      user: 'root',
      workdir: '/',
      env: {},
      binds: [{ source: gate, target: '/gate' }],
      network: 'none',
      memoryMB: 256,
      cpuCount: 1,
      timeoutMs: 60_000,
      onLine: (_, line) => lines.push(line),
    });
    try {
      await waitFor('the step to run', () => (lines.includes('waiting') ? true : undefined), { timeoutMs: 60_000 });
      // Its namespace started with a copy of both disks: the copies that used to keep them mounted.
      for (const bundle of bundles) expect(holdersElsewhere(bundle).length).toBeGreaterThan(0);

      await rt.stop('disk1'); // what a pause to disk does
      expect(holdersElsewhere(bundles[0]!)).toEqual([]);
      // The loop device goes with the file system's last mount (the kernel frees it a moment after); the deadline
      // only bounds a hang: the step keeps running until the gate opens.
      await waitFor('the loop device of the stopped sandbox to go', async () => ((await loopsOf(images[0]!)) === '' ? true : undefined));
      expect(fs.existsSync(images[0]!)).toBe(true);

      await rt.kill('disk2');
      expect(holdersElsewhere(bundles[1]!)).toEqual([]);
      await waitFor('the loop device of the killed sandbox to go', async () => ((await loopsOf(images[1]!)) === '' ? true : undefined));
      expect(fs.existsSync(images[1]!)).toBe(false);
      expect(lines).toEqual(['waiting']); // still running
    } finally {
      fs.writeFileSync(path.join(gate, 'open'), '');
      await done.catch(() => undefined);
    }
    expect(await done).toBe(0);
    await rt.kill('disk1');
    expect(traces('disk1')).toEqual([]);
    expect(await loopsOf(images[0]!)).toBe('');
  });

  test('admission counts the memory of running sandboxes: a stopped one frees it, its restart and a kill count again', async () => {
    // Room for two sandboxes of 256 MB (no overcommit), on this test's instance (its cleanup removes everything).
    const small = createOciRuntime({
      instance,
      runtime: runtimeName,
      ...roots(),
      network: hostNet.network,
      agent,
      capacity: { memoryMB: 512, cpuCount: 8 },
      admission: { memoryOvercommit: 1, cpuOvercommit: 1 },
    });
    const attach = async (id: string) => {
      const network = await hostNet.network.attach(id);
      addresses.set(id, network.address);
      return network;
    };
    const spec = (id: string) => ({ sandboxID: id, layers: [rootfs], memoryMB: 256, cpuCount: 1 });
    await small.create({ ...spec('adm1'), network: await attach('adm1') });
    await small.create({ ...spec('adm2'), network: await attach('adm2') });
    const third = await attach('adm3');
    await expect(small.create({ ...spec('adm3'), network: third })).rejects.toThrow(AdmissionError);
    await expect(small.create({ ...spec('adm3'), network: third })).rejects.toThrow(/memory/);
    expect(fs.existsSync(sandboxPaths(small.paths, 'adm3').bundle)).toBe(false);

    // Paused to disk: its memory is free for another, and its files are kept.
    await small.stop('adm1');
    await small.create({ ...spec('adm3'), network: third });
    expect(await waitForHealth(third.address, port)).toBe(204);
    // Its restart asks for that memory again: refused while two run, admitted once one is killed.
    await hostNet.network.detach('adm1');
    const again = await attach('adm1');
    await expect(small.create({ ...spec('adm1'), network: again, restart: true })).rejects.toThrow(AdmissionError);
    expect(small.hasChanges('adm1')).toBe(true);
    await small.kill('adm2');
    await small.create({ ...spec('adm1'), network: again, restart: true });
    expect(await waitForHealth(again.address, port)).toBe(204);
    await expect(small.create({ ...spec('adm4'), network: await attach('adm4') })).rejects.toThrow(AdmissionError);
    for (const id of ['adm1', 'adm3']) await small.kill(id);
    await hostNet.network.detach('adm4');
    expect(instanceCgroups(instance)).toEqual([]);
  });

  test('after a crash (runtime object dropped) cleanupLeftovers removes every trace, paused ones too', async () => {
    const a = await start('crash1');
    const b = await start('crash2');
    await rt.pause('crash2');
    const report = await cleanupLeftovers({ instance, ...roots(), network: hostNet.network });
    expect(report.containers.sort()).toEqual([`${runtimeName}:crash1`, `${runtimeName}:crash2`]);
    expect(traces('crash1', a.status.pid)).toEqual([]);
    expect(traces('crash2', b.status.pid)).toEqual([]);
    expect(instanceCgroups(instance)).toEqual([]);
    expect(fs.existsSync(rt.paths.dataDir)).toBe(false);
    expect(fs.existsSync(path.dirname(rt.paths.stateDir))).toBe(false);
  });

  test('a failed start (not a network namespace) is a clear error and leaves nothing', async () => {
    const notNetns = path.join(scratch, 'not-a-netns');
    fs.writeFileSync(notNetns, '');
    await expect(
      rt.create({
        sandboxID: 'bad1',
        layers: [rootfs],
        memoryMB: 256,
        cpuCount: 1,
        network: { netnsPath: notNetns, address: '198.19.0.9' },
      }),
    ).rejects.toThrow(new RegExp(`${runtimeName} could not start sandbox bad1`));
    expect(traces('bad1')).toEqual([]);
    expect(instanceCgroups(instance)).toEqual([]);
    await expect(
      rt.create({
        sandboxID: 'bad2',
        layers: [path.join(scratch, 'missing')],
        memoryMB: 256,
        cpuCount: 1,
        network: { netnsPath: notNetns, address: '198.19.0.9' },
      }),
    ).rejects.toThrow(/layer .*missing is not a directory/);
    expect(traces('bad2')).toEqual([]);
  });
});

test('a standalone network is found again by name (a restarted platform), with its attachments', async () => {
  const again = await openSandboxHostNetwork(hostNet.namespace.replace(/\.host$/, ''));
  expect([again.subnet, again.gateway, again.hostAddress]).toEqual([hostNet.subnet, hostNet.gateway, hostNet.hostAddress]);
  const a = await hostNet.network.attach('reopen1');
  await a.pending?.made;
  // Found again by its facts once its port is made (its join, still pending, belongs to the process that attached it).
  expect((await again.network.list()).get('reopen1')).toEqual({ netnsPath: a.netnsPath, address: a.address });
  const b = await again.network.attach('reopen2');
  expect(b.address).not.toBe(a.address);
  await again.network.detach('reopen1');
  await again.network.detach('reopen2');
  expect([...(await hostNet.network.list()).keys()]).toEqual([]);
});

test('a missing runtime binary is a clear error and creates nothing', () => {
  const instance = uniqueName('t');
  const stateRoot = path.join(scratch, 'missing-state');
  expect(() =>
    createOciRuntime({ instance, runtime: 'crun', binary: path.join(scratch, 'no-such-crun'), stateRoot, dataRoot: stateRoot }),
  ).toThrow(/OCI runtime crun not found at .*no-such-crun: install the Debian package crun, or choose runc or auto/);
  expect(fs.existsSync(stateRoot)).toBe(false);
});
