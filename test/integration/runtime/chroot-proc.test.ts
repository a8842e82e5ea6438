/**
 * A chroot directory of a sandbox (an MCP image server's filesystem) gets the sandbox's own /proc, bound by the host
 * after start: a program run in it reads its own /proc/self/status and sees the sandbox's processes, never the
 * host's; the sandbox still cannot mount or unmount anything. The same after a stop and a restart from the kept files
 * (pause to disk, then resume). An image filesystem attached to a running sandbox gets the same, is writable, and
 * a hostile image cannot make the host mount through its links. crun and runc; root only; one link into the root
 * namespace on a /24 of its own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_AGENT_PORT } from '../../../src/contract/agent-port';
import type { AgentPayload } from '../../../src/runtime/agent-payload';
import { cleanupLeftovers } from '../../../src/runtime/cleanup';
import { createSandboxHostNetwork, type SandboxHostNetwork } from '../../../src/runtime/network/host-network';
import { createOciRuntime, type OciSandboxRuntime } from '../../../src/runtime/oci-runtime';
import { agentRun, baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS, uniqueName, waitForHealth } from './helpers/common';
import { testRuntimes } from '../../helpers/test-runtime';

jest.setTimeout(180_000);

const DIR = '/opt/mcp-images/skm_image/rootfs';
const ATTACH = '/run/skm-attached';
const port = DEFAULT_AGENT_PORT;

let rootfs: string;
let scratch: string;
let imageLayer: string;
let hostNet: SandboxHostNetwork;
let agent: AgentPayload;
let hostProcess: ChildProcess;

/** A layer holding an image filesystem at DIR with the host's sh and cat and the libraries they link, nothing else. */
function makeImageLayer(layer: string): void {
  const root = path.join(layer, DIR);
  for (const d of ['bin', 'proc', 'dev']) fs.mkdirSync(path.join(root, d), { recursive: true });
  for (const bin of ['/bin/sh', '/bin/cat']) {
    const real = fs.realpathSync(bin);
    fs.copyFileSync(real, path.join(root, bin));
    fs.chmodSync(path.join(root, bin), 0o755);
    for (const lib of execFileSync('ldd', [real], { encoding: 'utf8' }).match(/\/\S+/g) ?? []) {
      fs.mkdirSync(path.join(root, path.dirname(lib)), { recursive: true });
      fs.copyFileSync(fs.realpathSync(lib), path.join(root, lib));
    }
  }
}

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/skm-chroot-proc-');
  agent = await freshAgentPayload(path.join(scratch, 'bundle'));
  imageLayer = path.join(scratch, 'image-layer');
  makeImageLayer(imageLayer);
  hostNet = await createSandboxHostNetwork(uniqueName('skm'));
  // A host process whose PID the sandbox must not see.
  hostProcess = spawn('sleep', ['600'], { stdio: 'ignore' });
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  hostProcess?.kill('SIGKILL');
  await hostNet?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe.each(testRuntimes(['crun', 'runc']))('%s', (runtimeName) => {
  let instance: string;
  let rt: OciSandboxRuntime;
  const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });

  beforeEach(() => {
    instance = uniqueName('skm');
    rt = createOciRuntime({ instance, runtime: runtimeName, ...roots(), network: hostNet.network, agent });
  });

  afterEach(async () => {
    await cleanupLeftovers({ instance, ...roots(), network: hostNet.network });
  });

  /** What a program in the chroot dir sees of /proc, and what the sandbox's root sees. */
  async function look(address: string, dir = DIR) {
    const script = [
      `chroot ${dir} /bin/sh -c 'while read -r l; do echo "$l"; done < /proc/self/status; echo ==; cd /proc && echo [0-9]*; echo ==; cat /proc/1/cmdline; echo'`,
      'echo ==; cd /proc && echo [0-9]*; echo ==; cat /proc/1/cmdline; echo',
    ].join('; ');
    const r = await agentRun(address, port, '/bin/sh', ['-c', script], 'root');
    const [status, chrootPids, chrootInit, sandboxPids, sandboxInit] = r.stdout.split('==\n');
    const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status ?? '')?.[1];
    return {
      name: field('Name'),
      pid: Number(field('Pid')),
      chrootPids: (chrootPids ?? '').trim().split(' ').map(Number),
      chrootInit: chrootInit?.trim(),
      sandboxPids: (sandboxPids ?? '').trim().split(' ').map(Number),
      sandboxInit: sandboxInit?.trim(),
      stderr: r.stderr,
    };
  }

  function expectOwnProc(seen: Awaited<ReturnType<typeof look>>) {
    expect(seen.stderr).toBe('');
    // Its own process (the shell opened /proc/self/status itself), with a PID of the sandbox's namespace, listed.
    expect(seen.name).toBe('sh');
    expect(seen.chrootPids).toContain(seen.pid);
    // The sandbox's processes (its first is the same as the sandbox's root sees), no host process.
    expect(seen.chrootInit).toBe(seen.sandboxInit);
    expect(seen.chrootInit).toMatch(/tini/);
    for (const hostPid of [hostProcess.pid!, process.pid]) {
      expect(seen.chrootPids).not.toContain(hostPid);
      expect(seen.sandboxPids).not.toContain(hostPid);
    }
  }

  test('a program in a chroot dir reads its own /proc/self/status and sees no host process; the sandbox cannot mount; the same after a restart', async () => {
    const id = 'proc1';
    const network = await hostNet.network.attach(id);
    const spec = { sandboxID: id, layers: [imageLayer, rootfs], memoryMB: 256, cpuCount: 1, network, chrootDirs: [DIR] };
    await rt.create(spec);
    expect(await waitForHealth(network.address, port)).toBe(204);
    expectOwnProc(await look(network.address));

    // Hostile: take the bound /proc away, mount a proc or bind one, remount it writable. Each is refused.
    const attack = await agentRun(
      network.address,
      port,
      '/bin/sh',
      [
        '-c',
        [
          `umount ${DIR}/proc && echo umounted`,
          `umount -l ${DIR}/proc && echo detached`,
          'mkdir -p /tmp/p && mount -t proc proc /tmp/p && echo mounted-proc',
          `mount --bind /proc ${DIR}/dev && echo bound`,
          `mount -o remount,rw ${DIR}/proc/sys && echo remounted`,
          `echo 1 > ${DIR}/proc/sys/kernel/panic && echo wrote-sysctl`,
          'true',
        ].join('; '),
      ],
      'root',
    );
    expect(attack.stdout).toBe('');
    expect(attack.stderr).toMatch(/must be superuser|permission denied|not permitted|read-only/i);
    expectOwnProc(await look(network.address));

    // Pause to disk, then resume: a new container from the kept files gets its own /proc bound again.
    // (The platform's reboot: the container stopped, its network attached again.)
    await rt.stop(id);
    await hostNet.network.detach(id);
    const again = await hostNet.network.attach(id);
    await rt.create({ ...spec, network: again, restart: true });
    expect(await waitForHealth(again.address, port)).toBe(204);
    expectOwnProc(await look(again.address));
    await rt.kill(id);
  });

  test('an image attached to a running sandbox: writable, its own /dev and /proc, read-only files beside it; a hostile image cannot make the host mount through a link; gone at stop', async () => {
    const id = 'attach1';
    const network = await hostNet.network.attach(id);
    await rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 256, cpuCount: 1, network, attachDir: ATTACH });
    expect(await waitForHealth(network.address, port)).toBe(204);
    const sh = (script: string) => agentRun(network.address, port, '/bin/sh', ['-c', script], 'root');

    rt.setAttachedFiles(id, 'img', { pulling: 'mcp/x\n' });
    expect((await sh(`cat ${ATTACH}/img/pulling; ls ${ATTACH}/img`)).stdout).toBe('mcp/x\npulling\n');

    // The image's top layer is hostile: its dev and proc are links to host directories.
    const hostile = path.join(scratch, `hostile-${runtimeName}`);
    const canaries = [path.join(scratch, `canary-dev-${runtimeName}`), path.join(scratch, `canary-proc-${runtimeName}`)];
    for (const c of canaries) fs.mkdirSync(c, { recursive: true });
    fs.mkdirSync(hostile, { recursive: true });
    fs.symlinkSync(canaries[0], path.join(hostile, 'dev'));
    fs.symlinkSync(canaries[1], path.join(hostile, 'proc'));
    await rt.attachImage(id, { key: 'img', layers: [hostile, path.join(imageLayer, DIR)], attachDir: ATTACH });
    rt.setAttachedFiles(id, 'img', { pulling: null, 'image.json': '{}\n' });
    const mounts = () => fs.readFileSync('/proc/self/mountinfo', 'utf8');
    for (const c of canaries) {
      expect(mounts()).not.toContain(` ${c} `);
      expect(fs.readdirSync(c)).toEqual([]);
    }

    const root = `${ATTACH}/img/rootfs`;
    expectOwnProc(await look(network.address, root));
    expect((await sh(`ls ${ATTACH}/img; ls ${root}/dev`)).stdout.split('\n').filter(Boolean)).toEqual([
      'image.json',
      'rootfs',
      ...['full', 'null', 'random', 'tty', 'urandom', 'zero'],
    ]);
    const written = await sh(`chroot ${root} /bin/sh -c 'echo kept > /written; while read -r l; do echo "$l"; done < /written'`);
    expect(written).toMatchObject({ stdout: 'kept\n', stderr: '' });

    // Hostile from inside: write beside the image, unmount it or its /proc, mount over it.
    const attack = await sh(
      [
        `touch ${ATTACH}/img/x && echo touched`,
        `rm -f ${ATTACH}/img/image.json && echo removed`,
        `umount ${root}/proc && echo umounted-proc`,
        `umount -l ${root} && echo umounted-root`,
        `mount -t tmpfs tmpfs ${root}/dev && echo mounted`,
        'true',
      ].join('; '),
    );
    expect(attack.stdout).toBe('');
    expect(attack.stderr).toMatch(/read-only|must be superuser|not permitted|permission denied/i);
    expectOwnProc(await look(network.address, root));

    // Stop (pause to disk): nothing of it stays mounted on the host; a restart starts without it.
    const bundle = path.join(rt.paths.dataDir, id);
    await rt.stop(id);
    expect(mounts()).not.toContain(`${bundle}/`);
    await hostNet.network.detach(id);
    const again = await hostNet.network.attach(id);
    await rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 256, cpuCount: 1, network: again, attachDir: ATTACH, restart: true });
    expect(await waitForHealth(again.address, port)).toBe(204);
    const after = await agentRun(again.address, port, '/bin/sh', ['-c', `ls -A ${ATTACH}`], 'root');
    expect(after).toMatchObject({ stdout: '', stderr: '' });
    await rt.kill(id);
    expect(mounts()).not.toContain(`${bundle}/`);
  });
});
