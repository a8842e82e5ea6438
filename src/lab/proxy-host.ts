/**
 * The lab's proxy host: the rendered host files at their on-host paths, the rendered sysctls, ss-server under the
 * supervisor that runs the rendered unit, and sshd so `sandbox-kit verify` can check the host over SSH.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_PATHS } from '../render';
import { labScript } from './dist-path';
import type { LayerFile } from './etc-layer';
import { waitFor } from '../util/poll';
import { inNamespace, must, run, spawnLabProcess } from './run';
import type { SupervisorStatus } from './supervisor';

/** proxyHostFiles() gives octal text permissions; the layer wants numbers. */
export function hostFilesToLayer(files: readonly { path: string; permissions: string; content: string }[]): LayerFile[] {
  return files.map((f) => ({ path: f.path, content: f.content, mode: parseInt(f.permissions, 8) }));
}

export function sysctlPath(key: string): string {
  return `/proc/sys/${key.replace(/\./g, '/')}`;
}

export interface SysctlOutcome {
  applied: Record<string, string>;
  /** key -> why it was not applied in the namespace (and what was done instead). */
  notApplied: Record<string, string>;
}

/**
 * Applies each sysctl inside the namespace. A key with no file under /proc/sys there is not per-namespace
 * (net.core.default_qdisc): changing it would change the whole machine, so it is reported, not set. For the default
 * qdisc the per-namespace equivalent is set instead: fq as the root qdisc of the default-route device.
 */
export async function applySysctls(ns: string, settings: Record<string, string>, defaultRouteDevice: string): Promise<SysctlOutcome> {
  const outcome: SysctlOutcome = { applied: {}, notApplied: {} };
  for (const [key, value] of Object.entries(settings)) {
    const exists = (await run(inNamespace(ns, ['test', '-e', sysctlPath(key)]))).code === 0;
    if (!exists) {
      if (key === 'net.core.default_qdisc') {
        const tc = await run(inNamespace(ns, ['tc', 'qdisc', 'replace', 'dev', defaultRouteDevice, 'root', value]));
        outcome.notApplied[key] =
          tc.code === 0
            ? `global, not per network namespace; set ${value} as root qdisc of ${defaultRouteDevice} instead`
            : `global, not per network namespace; the per-device equivalent failed too (${value} qdisc not available in this kernel? tc: ${tc.stderr.trim()})`;
      } else {
        outcome.notApplied[key] = 'global, not per network namespace; left unchanged';
      }
      continue;
    }
    if (key === 'net.ipv4.tcp_congestion_control') {
      const available = (await must(inNamespace(ns, ['cat', sysctlPath('net.ipv4.tcp_available_congestion_control')]))).trim().split(/\s+/);
      if (!available.includes(value)) {
        outcome.notApplied[key] = `${value} not available in this kernel (available: ${available.join(' ')}; try modprobe tcp_${value})`;
        continue;
      }
    }
    await must(inNamespace(ns, ['sysctl', '-q', '-w', `${key}=${value}`]));
    outcome.applied[key] = value;
  }
  return outcome;
}

export async function defaultRouteDevice(ns: string): Promise<string> {
  const out = await must(['ip', '-n', ns, '-4', 'route', 'show', 'default']);
  const m = /\bdev (\S+)/.exec(out);
  if (!m) throw new Error(`namespace ${ns} has no default route`);
  return m[1]!;
}

export function readSupervisorStatus(path: string): SupervisorStatus | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SupervisorStatus;
  } catch {
    return undefined;
  }
}

async function listening(ns: string, proto: 'tcp' | 'udp', port: number): Promise<boolean> {
  const flag = proto === 'tcp' ? '-Hltn' : '-Hlun';
  const out = await run(['ip', 'netns', 'exec', ns, 'ss', flag, `sport = :${port}`]);
  return out.code === 0 && out.stdout.trim() !== '';
}

export function waitListening(ns: string, proto: 'tcp' | 'udp', port: number, what: string, timeoutMs = 10_000): Promise<true> {
  return waitFor(`${what} to listen on ${port}/${proto} in ${ns}`, async () => ((await listening(ns, proto, port)) ? true : undefined), {
    timeoutMs,
  });
}

export interface SupervisorStart {
  pid: number;
  /** util/process-start.ts */
  startTime: string;
  log: string;
  statusFile: string;
}

/** Starts the supervisor on the rendered unit (as the proxy host sees it), detached; waits for the service to run. */
export async function startSupervisor(ns: string, etcLayer: string, dir: string, serverPort: number): Promise<SupervisorStart> {
  const statusFile = join(dir, 'supervisor.json');
  const log = join(dir, 'logs', 'supervisor.log');
  const { pid, startTime } = spawnLabProcess(
    inNamespace(ns, [process.execPath, labScript('supervisor'), HOST_PATHS.unit, '--status', statusFile], etcLayer),
    log,
  );
  try {
    await waitListening(ns, 'tcp', serverPort, 'ss-server');
  } catch (err) {
    const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(`${(err as Error).message}\nsupervisor log (${log}):\n${tail}`);
  }
  return { pid, startTime, log, statusFile };
}

export interface SshSetup {
  clientKey: string;
  pid: number;
  /** util/process-start.ts */
  startTime: string;
  log: string;
  port: number;
}

/**
 * sshd for the proxy namespace, with its own host key, config and authorized key (a client key made for this lab).
 * Root may log in with that key only. sshd runs with the proxy's /etc view, so SSH sessions see the host files.
 */
export async function startSshd(ns: string, etcLayer: string, dir: string, port = 22): Promise<SshSetup> {
  const sshDir = join(dir, 'ssh');
  mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  const hostKey = join(sshDir, 'host_ed25519_key');
  const clientKey = join(sshDir, 'client_ed25519_key');
  await must(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'sandbox-kit-lab-host', '-f', hostKey]);
  await must(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'sandbox-kit-lab-client', '-f', clientKey]);
  const authorized = join(sshDir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(`${clientKey}.pub`), { mode: 0o600 });
  const config = join(sshDir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 0.0.0.0',
      `HostKey ${hostKey}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      `AuthorizedKeysFile ${authorized}`,
      `PidFile ${join(sshDir, 'sshd.pid')}`,
      // PAM would account the lab's sessions on the real host (logind, lastlog); key-only root login needs none of it.
      'UsePAM no',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // sshd's privilege-separation directory; Debian's unit creates it at boot, a machine without a running sshd may lack it.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const log = join(dir, 'logs', 'sshd.log');
  const { pid, startTime } = spawnLabProcess(inNamespace(ns, ['/usr/sbin/sshd', '-D', '-e', '-f', config], etcLayer), log);
  await waitListening(ns, 'tcp', port, 'sshd');
  return { clientKey, pid, startTime, log, port };
}
