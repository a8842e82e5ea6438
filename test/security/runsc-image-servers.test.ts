/**
 * MCP image servers under runsc (gVisor): an image server's filesystem given at create (pulled within the create, as
 * the platform does under runsc, or preinstalled in a template: both are layers of the sandbox from its start) gets a
 * /dev and a /proc of gVisor's kernel (no more devices than the sandbox's own /dev, its tty among them, which behaves
 * as the sandbox's own); the in-sandbox gateway runs the image's server there and the MCP client lists and calls its
 * tools. Hostile: from inside, the /proc and /dev cannot
 * be unmounted, replaced or made writable, a disk's node made there reads nothing, the host's processes stay unseen; an image
 * whose `dev` and `proc` are links to host directories mounts nothing there (nor over the sandbox's own /etc), also
 * after a restart from the kept files. Attaching to a running runsc sandbox is refused with the reason. Root only; one
 * link into the root namespace on a /24 of its own; instance names rfx….
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bundle, bundleEntries } from '../../scripts/bundle';
import { DEFAULT_AGENT_PORT } from '../../src/contract/agent-port';
import { MCP_GATEWAY_PORT } from '../../src/contract/mcp';
import { mcpImageRoots, mcpImagesFor } from '../../src/platform/sandboxes/mcp-images';
import type { AgentPayload } from '../../src/runtime/agent-payload';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { createSandboxHostNetwork, type SandboxHostNetwork } from '../../src/runtime/network/host-network';
import { createOciRuntime, type OciSandboxRuntime } from '../../src/runtime/oci-runtime';
import {
  agentRun,
  baseRootfs,
  freshAgentPayload,
  ROOTFS_TIMEOUT_MS,
  uniqueName,
  waitForHealth,
} from '../integration/runtime/helpers/common';
import { type LabRegistry, pushEverythingImage, startLabRegistry } from '../integration/mcp/helpers/lab-registry';
import { text } from '../integration/mcp/helpers/common';

jest.setTimeout(180_000);

const port = DEFAULT_AGENT_PORT;
const TIME_ROOT = '/opt/mcp-images/mcp_time/rootfs';
const EVIL_ROOT = '/opt/mcp-images/evil/rootfs';
/** Device nodes an image filesystem's /dev holds under runsc: gVisor's own /dev file system (oci-config.ts). */
const DEVICES = expect.arrayContaining(['full', 'null', 'random', 'tty', 'urandom', 'zero']) as string[];

/** What opening /dev/tty does for a process of `node` (node's path in `root`, else the sandbox's own): its node and the outcome. */
const ttyProbe = (root?: string) =>
  `${root ? `chroot ${root} /usr/bin/node` : '/opt/sandbox-kit/node'} -e "const fs = require('fs'); const st = fs.statSync('/dev/tty'); let r = 'opened'; try { fs.closeSync(fs.openSync('/dev/tty', 'r+')); } catch (e) { r = e.code; } console.log(st.isCharacterDevice(), st.rdev, r)"`;

let rootfs: string;
let scratch: string;
let agent: AgentPayload;
let hostNet: SandboxHostNetwork;
let registry: LabRegistry;
let instance: string;
let rt: OciSandboxRuntime;
/** The image layers of the `time` server, as a create under runsc gets them (mcp-images.ts). */
let timeLayers: string[];
let evilLayer: string;
let canary: string;

/**
 * A layer with an image filesystem whose `dev` links to a host directory of the test's and `proc` to /etc (the host's,
 * and the sandbox's own).
 */
function makeEvilLayer(layer: string, hostDir: string): void {
  const root = path.join(layer, EVIL_ROOT);
  fs.mkdirSync(path.join(root, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(path.dirname(root), 'image.json'), '{"ref":"evil","entrypoint":[],"cmd":[],"env":[]}\n');
  fs.symlinkSync(hostDir, path.join(root, 'dev'));
  fs.symlinkSync('/etc', path.join(root, 'proc'));
}

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/rfx-image-servers-');
  agent = await freshAgentPayload(path.join(scratch, 'bundle'));
  // The in-sandbox gateway, from the payload every sandbox has mounted (the mcp-gateway template's wrapper runs it).
  await bundle(bundleEntries().find((e) => e.name === 'mcp-gateway')!, path.join(scratch, 'bundle'));
  registry = await startLabRegistry();
  pushEverythingImage(registry.host, 'mcp/time:latest');
  const state = path.join(scratch, 'platform');
  timeLayers = await mcpImagesFor(state, { mirror: registry.host }, (line) => process.stderr.write(`${line}\n`)).layers({ time: {} }, [
    rootfs,
  ]);
  canary = path.join(scratch, 'canary');
  fs.mkdirSync(canary);
  evilLayer = path.join(scratch, 'evil-layer');
  makeEvilLayer(evilLayer, canary);
  hostNet = await createSandboxHostNetwork(uniqueName('rfx'));
  instance = uniqueName('rfx');
  rt = createOciRuntime({
    instance,
    runtime: 'runsc',
    stateRoot: path.join(scratch, 'state'),
    dataRoot: path.join(scratch, 'data'),
    network: hostNet.network,
    agent,
  });
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  if (instance)
    await cleanupLeftovers({
      instance,
      stateRoot: path.join(scratch, 'state'),
      dataRoot: path.join(scratch, 'data'),
      network: hostNet?.network,
    });
  await hostNet?.close();
  await registry?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

async function createWith(id: string, layers: string[], restart = false) {
  const network = await hostNet.network.attach(id);
  const all = [...layers, rootfs];
  await rt.create({
    sandboxID: id,
    layers: all,
    memoryMB: 512,
    cpuCount: 1,
    network,
    chrootDirs: mcpImageRoots(all),
    ...(restart ? { restart } : {}),
  });
  expect(await waitForHealth(network.address, port)).toBe(204);
  const sh = async (script: string) => {
    const r = await agentRun(network.address, port, '/bin/sh', ['-c', script], 'root');
    return { stdout: r.stdout, stderr: r.stderr };
  };
  return { address: network.address, sh };
}

/** The PIDs a directory of proc lists. */
const pids = (ls: string) =>
  ls
    .split('\n')
    .filter((l) => /^\d+$/.test(l))
    .map(Number);

test('an image server given at create runs under runsc: its /dev and a /proc of its own; the gateway lists and calls its tools', async () => {
  expect(rt.name).toBe('runsc');
  const { address, sh } = await createWith('rfxtime', timeLayers);
  // The server's image checks its /dev/urandom, /dev/null and /proc/self/status before the server starts (lab-registry.ts).
  const started = await sh(
    `GATEWAY_ACCESS_TOKEN=rfx-token /opt/sandbox-kit/node /opt/sandbox-kit/bundle/mcp-gateway.js --config '{"time":{}}' && echo started`,
  );
  expect(started.stdout).toContain('started');
  const client = new Client({ name: 'runsc-image-servers', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://${address}:${MCP_GATEWAY_PORT}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer rfx-token' } },
    }),
  );
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['time__echo', 'time__get-sum']));
    expect(text(await client.callTool({ name: 'time__echo', arguments: { message: 'under gVisor' } }))).toBe('Echo: under gVisor');
  } finally {
    await client.close();
  }
  const seen = await sh(
    `ls ${TIME_ROOT}/dev; echo ==; ls ${TIME_ROOT}/proc; echo ==; for p in /proc/[0-9]*; do grep -qs start.mjs $p/cmdline && echo \${p#/proc/}; done`,
  );
  const [devices, procList, server] = seen.stdout.split('==\n');
  expect(devices!.split('\n').filter(Boolean)).toEqual(DEVICES);
  // Nothing there that the sandbox's own /dev lacks.
  const own = (await sh('ls /dev')).stdout.split('\n').filter(Boolean);
  expect(own).toEqual(expect.arrayContaining(devices!.split('\n').filter(Boolean)));
  // Its tty is the sandbox's: the same device, and opening it does what it does in the sandbox's own /dev (with no
  // terminal there: an error of gVisor's, not EBADF from a host node opened by the file proxy).
  const [inImage, inSandbox] = await Promise.all([sh(ttyProbe(TIME_ROOT)), sh(ttyProbe())]);
  expect(inImage).toEqual(inSandbox);
  expect(inImage.stdout).toMatch(/^true 1280 \S+\n$/);
  expect(inImage.stdout).not.toContain('EBADF');
  // Its /proc is the sandbox's (gVisor's kernel): the server's process is in it.
  const serverPid = Number(server!.trim().split(/\s+/)[0]);
  expect(pids(procList!)).toContain(serverPid);
  expect(pids(procList!)).not.toContain(process.pid);
  expect(seen.stderr).toBe('');
  await rt.kill('rfxtime');
});

test('hostile: the image filesystem keeps its /dev and /proc; links to host directories mount nothing there; the same after a restart', async () => {
  const id = 'rfxevil';
  const layers = [evilLayer, ...timeLayers];
  let box = await createWith(id, layers);
  const mountsOnHost = () => fs.readFileSync('/proc/self/mountinfo', 'utf8');
  const checkHost = () => {
    for (const dir of [canary, '/etc']) expect(mountsOnHost()).not.toContain(` ${dir} `);
    expect(fs.readdirSync(canary)).toEqual([]);
    expect(fs.existsSync('/etc/passwd')).toBe(true);
  };
  const look = async () => {
    const r = await box.sh(
      [
        `ls ${EVIL_ROOT}/dev`,
        'echo ==',
        `chroot ${TIME_ROOT} /usr/bin/node -e "process.stdout.write(require('fs').readFileSync('/proc/self/status','utf8').match(/^Pid:.*$/m)[0])"`,
        'echo; echo ==',
        `ls ${EVIL_ROOT}/proc | grep -c '^[0-9]'`,
        'echo ==',
        // The sandbox's own /etc is untouched by the image's links.
        'ls /etc/passwd',
      ].join('; '),
    );
    const [evilDev, status, evilProcs, etc] = r.stdout.split('==\n');
    return {
      evilDev: evilDev!.split('\n').filter(Boolean),
      status: status!.trim(),
      evilProcs: Number(evilProcs),
      etc: etc!.trim(),
      stderr: r.stderr,
    };
  };

  checkHost();
  const seen = await look();
  expect(seen).toMatchObject({ evilDev: DEVICES, status: expect.stringMatching(/^Pid:\t\d+$/), etc: '/etc/passwd', stderr: '' });
  expect(seen.evilProcs).toBeGreaterThan(0);

  // From inside, as root: take /proc or /dev away, mount over them or remount them, read a disk through a node made there.
  const attack = await box.sh(
    [
      `umount ${TIME_ROOT}/proc && echo umounted-proc`,
      `umount -l ${TIME_ROOT}/dev && echo umounted-dev`,
      'mkdir -p /tmp/p && mount -t proc proc /tmp/p && echo mounted-proc',
      `mount --bind /proc ${TIME_ROOT}/dev && echo bound`,
      `mount -o remount,rw ${TIME_ROOT}/proc/sys && echo remounted`,
      // gVisor lets its root make a node in its own tmpfs; the node reaches no device of the host's.
      `mknod ${TIME_ROOT}/dev/sda b 8 0; head -c 16 ${TIME_ROOT}/dev/sda > /dev/null && echo read-disk`,
      `rmdir ${TIME_ROOT}/proc && echo removed-proc`,
      'true',
    ].join('; '),
  );
  expect(attack.stdout).toBe('');
  expect(attack.stderr).toMatch(/must be superuser|not permitted|permission denied|read-only|busy/i);
  expect(attack.stderr).toMatch(/dev\/sda.*No such device/);
  checkHost();
  expect(await look()).toMatchObject({ evilDev: DEVICES, status: expect.stringMatching(/^Pid:\t\d+$/), etc: '/etc/passwd', stderr: '' });

  // Stopped (pause to disk) and started again from its kept files: the same mounts, the host's directories untouched.
  await rt.stop(id);
  await hostNet.network.detach(id);
  box = await createWith(id, layers, true);
  checkHost();
  expect(await look()).toMatchObject({ evilDev: DEVICES, status: expect.stringMatching(/^Pid:\t\d+$/), etc: '/etc/passwd', stderr: '' });
  await rt.kill(id);
  checkHost();
});

test('attaching an image to a running runsc sandbox is refused with the reason, and nothing is mounted', async () => {
  expect(rt.attachesAfterStart).toBe(false);
  const id = 'rfxattach';
  await createWith(id, []);
  const bundleDir = path.join(rt.paths.dataDir, id);
  await expect(rt.attachImage(id, { key: 'img', layers: timeLayers, attachDir: '/run/rfx-attached' })).rejects.toThrow(
    /cannot attach img to sandbox rfxattach: under runsc a filesystem is given at create, not after start/,
  );
  expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(`${bundleDir}/attach`);
  await rt.kill(id);
});
