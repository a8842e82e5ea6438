/**
 * Shared setup of the runtime's integration tests: the cached base root file system, a fresh agent bundle, unique
 * instance names, and checks that nothing of a sandbox is left. These tests run as root with crun and runc, and
 * put one link into the root namespace (the standalone sandbox network) on a /24 of their own, so they run beside the other test files.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { bundle, bundleEntries, BUNDLE_DIR } from '../../../../scripts/bundle';
import { defaultAgentPayload, type AgentPayload } from '../../../../src/runtime/agent-payload';
import { MmdebstrapImages } from '../../../../src/runtime/base-images';
import { hostCgroupMounts } from '../../../../src/runtime/cgroups';

export const ROOTFS_TIMEOUT_MS = 15 * 60_000;

export function uniqueName(prefix: string): string {
  return `${prefix}${randomBytes(3).toString('hex')}`;
}

/** The base rootfs (built once into the shared cache; CI builds it up front with scripts/setup-rootfs.sh). */
export function baseRootfs(): Promise<string> {
  return new MmdebstrapImages().rootfs('debian:bookworm', (line) => process.stderr.write(`rootfs: ${line}\n`));
}

/** The agent bundled from the current sources into dist/bundle (where the runtime's default payload looks). */
export async function freshAgentBundle(): Promise<string> {
  await bundle(bundleEntries().find((e) => e.name === 'agent')!);
  return BUNDLE_DIR;
}

/** The agent bundled from the current sources into `outDir` (a test's own, so parallel test files never share one). */
export async function freshAgentPayload(outDir: string): Promise<AgentPayload> {
  await bundle(bundleEntries().find((e) => e.name === 'agent')!, outDir);
  return { ...defaultAgentPayload(), bundleDir: outDir };
}

/** One GET on a fresh connection (no keep-alive, so a paused sandbox leaves no socket behind). */
export function httpStatus(url: string, timeoutMs = 1000): Promise<number | 'timeout' | 'refused'> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', () => resolve('refused'));
  });
}

export async function waitForHealth(address: string, port: number, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await httpStatus(`http://${address}:${port}/health`, 1000);
    if (s === 204 || Date.now() > deadline) return typeof s === 'number' ? s : -1;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function tcpConnects(address: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The container's cgroup (relative path) in the hierarchy of `controller` ('' for cgroup2), from /proc/PID/cgroup. */
export function cgroupOf(pid: number, controller: string): string | undefined {
  for (const line of fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const [, ctrls, p] = line.split(':');
    if (ctrls === undefined || p === undefined) continue;
    if (controller === '' ? ctrls === '' : ctrls.split(',').includes(controller)) return p;
  }
  return undefined;
}

/** Limit files of a container wherever this host keeps them (v1 controllers or cgroup2). */
export function limitsOf(pid: number): { memory: string; cpu: string; pids: string } {
  const mounts = hostCgroupMounts();
  const v1 = (ctrl: string) => mounts.find((m) => m.type === 'cgroup' && m.controllers.includes(ctrl));
  const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8').trim();
  const mem = v1('memory');
  if (mem) {
    const cpu = v1('cpu')!;
    const pids = v1('pids')!;
    const memDir = path.join(mem.mountPoint, cgroupOf(pid, 'memory')!);
    const cpuDir = path.join(cpu.mountPoint, cgroupOf(pid, 'cpu')!);
    return {
      memory: read(memDir, 'memory.limit_in_bytes'),
      cpu: `${read(cpuDir, 'cpu.cfs_quota_us')} ${read(cpuDir, 'cpu.cfs_period_us')}`,
      pids: read(path.join(pids.mountPoint, cgroupOf(pid, 'pids')!), 'pids.max'),
    };
  }
  const v2 = mounts.find((m) => m.type === 'cgroup2')!;
  const dir = path.join(v2.mountPoint, cgroupOf(pid, '')!);
  return { memory: read(dir, 'memory.max'), cpu: read(dir, 'cpu.max'), pids: read(dir, 'pids.max') };
}

/** How many OOM kills the container's memory cgroup saw. */
export function oomKills(pid: number): number {
  const mounts = hostCgroupMounts();
  const mem = mounts.find((m) => m.type === 'cgroup' && m.controllers.includes('memory'));
  if (mem) {
    const text = fs.readFileSync(path.join(mem.mountPoint, cgroupOf(pid, 'memory')!, 'memory.oom_control'), 'utf8');
    return Number(/oom_kill (\d+)/.exec(text)?.[1] ?? 0);
  }
  const v2 = mounts.find((m) => m.type === 'cgroup2')!;
  const text = fs.readFileSync(path.join(v2.mountPoint, cgroupOf(pid, '')!, 'memory.events'), 'utf8');
  return Number(/oom_kill (\d+)/.exec(text)?.[1] ?? 0);
}

/** Every trace a sandbox could leave: returns a description of each one found (empty: nothing left). */
export function tracesOf(opts: {
  instance: string;
  sandboxID: string;
  stateDir: string;
  dataDir: string;
  netns: string;
  pid?: number;
}): string[] {
  const found: string[] = [];
  const bundle = path.join(opts.dataDir, opts.sandboxID);
  if (fs.existsSync(bundle)) found.push(`sandbox dir ${bundle}`);
  for (const beside of [`${bundle}.disk`, `${bundle}.console.log`]) if (fs.existsSync(beside)) found.push(`file ${beside}`);
  if (fs.existsSync(path.join(opts.stateDir, opts.sandboxID))) found.push(`runtime state ${opts.stateDir}/${opts.sandboxID}`);
  if (fs.existsSync(`/run/netns/${opts.netns}`)) found.push(`netns ${opts.netns}`);
  for (const m of hostCgroupMounts()) {
    const dir = path.join(m.mountPoint, `sandbox-kit-${opts.instance}`, opts.sandboxID);
    if (fs.existsSync(dir)) found.push(`cgroup ${dir}`);
  }
  if (opts.pid !== undefined && fs.existsSync(`/proc/${opts.pid}`)) {
    const stat = fs.readFileSync(`/proc/${opts.pid}/stat`, 'utf8');
    if (!/\) Z /.test(stat)) found.push(`process ${opts.pid}`);
  }
  // A mount of the sandbox's root file system in any mount namespace on the host.
  for (const pidDir of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${pidDir}/mountinfo`, 'utf8').includes(bundle)) {
        found.push(`mount of ${bundle} seen by process ${pidDir}`);
        break;
      }
    } catch {
      // process gone
    }
  }
  return found;
}

/** Cgroup parents of an instance left in any hierarchy. */
export function instanceCgroups(instance: string): string[] {
  return hostCgroupMounts()
    .map((m) => path.join(m.mountPoint, `sandbox-kit-${instance}`))
    .filter((d) => fs.existsSync(d));
}

/**
 * Runs a command through the agent's process service (Process.Start, Connect JSON streaming, as the E2B SDK calls
 * it) and collects its output and end event.
 */
export function agentRun(
  address: string,
  port: number,
  cmd: string,
  args: string[],
  user?: string,
): Promise<{ stdout: string; stderr: string; end: Record<string, unknown> }> {
  const json = Buffer.from(JSON.stringify({ process: { cmd, args } }));
  const frame = Buffer.alloc(5 + json.length);
  frame.writeUInt32BE(json.length, 1);
  json.copy(frame, 5);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `http://${address}:${port}/process.Process/Start`,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/connect+json',
          'connect-protocol-version': '1',
          ...(user ? { authorization: `Basic ${Buffer.from(`${user}:`).toString('base64')}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let buf = Buffer.concat(chunks);
          const out = { stdout: '', stderr: '', end: {} as Record<string, unknown> };
          while (buf.length >= 5) {
            const len = buf.readUInt32BE(1);
            const msg = JSON.parse(buf.subarray(5, 5 + len).toString('utf8')) as {
              event?: { data?: { stdout?: string; stderr?: string }; end?: Record<string, unknown> };
              error?: unknown;
            };
            if (buf[0] === 2 && msg.error) return reject(new Error(`agent: ${JSON.stringify(msg.error)}`));
            if (msg.event?.data?.stdout) out.stdout += Buffer.from(msg.event.data.stdout, 'base64').toString();
            if (msg.event?.data?.stderr) out.stderr += Buffer.from(msg.event.data.stderr, 'base64').toString();
            if (msg.event?.end) out.end = msg.event.end;
            buf = buf.subarray(5 + len);
          }
          resolve(out);
        });
      },
    );
    req.on('error', reject);
    req.end(frame);
  });
}
