/**
 * Renders an OCI runtime config (config.json) from what the kit knows about one container. Pure: no files, no env.
 *
 * Choices, and why:
 * - Capabilities: podman's default set plus NET_ADMIN and NET_RAW. The sandbox has its own network namespace, so
 *   those two reach only it; they let a template run iptables (the transparent proxy's NAT chain) and ping.
 * - noNewPrivileges is off: the default user may use setuid programs (su, sudo, ping) as on E2B, and the agent
 *   starts processes as other users. The sandbox still has no way to gain capabilities outside the set above.
 * - rlimits: only NOFILE, at most the host's own hard limit (a host without CAP_SYS_RESOURCE cannot raise it).
 * - A seccomp profile (seccomp.ts) on every container; build steps also lose NET_ADMIN and NET_RAW (a step's network
 *   namespace is the platform's, not the template's: a step must not change its filtering).
 * - `hardened: false` drops the seccomp profile: only for the benchmark that measures what the hardening costs.
 */
import type { IdMapping } from './id-shift';
import { renderSeccomp, type SeccompProfile } from './seccomp';
import { SECCOMP_BPF_ANNOTATION } from './seccomp-bpf';
import { chrootDirProblem } from './chroot-proc';

export const DEFAULT_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_NET_BIND_SERVICE',
  'CAP_SETFCAP',
  'CAP_SETGID',
  'CAP_SETPCAP',
  'CAP_SETUID',
  'CAP_SYS_CHROOT',
  'CAP_NET_ADMIN',
  'CAP_NET_RAW',
] as const;

/** What a build step keeps: the sandbox's set without the two that reach the network namespace's filtering. */
export const BUILD_CAPABILITIES = DEFAULT_CAPABILITIES.filter((c) => c !== 'CAP_NET_ADMIN' && c !== 'CAP_NET_RAW');

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
export const CPU_PERIOD_US = 100_000;

export interface BindMount {
  source: string;
  target: string;
  readonly: boolean;
}

export interface ContainerConfigInput {
  /** Absolute path of the (already mounted) root filesystem. */
  rootfs: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid: number;
  gid: number;
  additionalGids?: number[];
  hostname: string;
  /** Network namespace to join. Absent: the host's network (template builds), unless privateNetwork. */
  netnsPath?: string;
  /**
   * A new network namespace of the container's own, loopback only (the runtime brings lo up) until the kit moves a
   * link in between create and start (NetworkAttachment.pending).
   */
  privateNetwork?: boolean;
  memoryBytes: number;
  cpuCount: number;
  pidsLimit: number;
  /** e.g. /sandbox-kit-<instance>/<id> */
  cgroupsPath: string;
  binds: BindMount[];
  /** Soft and hard RLIMIT_NOFILE. */
  nofile: number;
  /** oom_score_adj of the container's first process (see oom.ts). */
  oomScoreAdj?: number;
  /**
   * The container's user namespace (id-shift.ts, userns.ts): joined by path (it owns the sandbox's network
   * namespace) or new; uid/gid 0..size-1 inside are base.. on the host. Absent only for the benchmark's peer.
   */
  userns?: { path?: string; mapping: IdMapping };
  /** 'build': without NET_ADMIN and NET_RAW. Default 'sandbox'. */
  role?: 'sandbox' | 'build';
  /** Default true; false only to measure the hardening's cost. */
  hardened?: boolean;
  /** crun: the seccomp profile compiled already (base64; seccomp-bpf.ts), loaded by crun instead of compiling it. */
  seccompBpf?: string;
  /**
   * Directories inside the container that programs enter with chroot (an MCP image server's filesystem): each gets a
   * /dev tmpfs holding only null, zero, full, random, urandom and tty (CHROOT_DEVICES), and a small tmpfs at /proc
   * over which the host binds the container's own /proc once it runs (chroot-proc.ts).
   */
  chrootDirs?: string[];
  /**
   * The runtime is runsc: each chroot dir's /proc is a proc of gVisor's kernel that the runtime mounts (a bind the
   * host makes cannot reach into gVisor's mount table), and its /dev is gVisor's own device file system (type `dev`),
   * the nodes the sandbox's /dev has, tty among them, served by gVisor's kernel. Host nodes bound in would be opened
   * by gVisor's file proxy on the host, and its tty is no terminal of the sandbox's (EBADF).
   */
  gvisor?: boolean;
  /**
   * The container's mounts are slaves of the host's (rootfsPropagation rslave, runc's default): a mount the host
   * makes later below a bind's source appears inside (attach-image.ts). Default: private (crun's default).
   */
  followHostMounts?: boolean;
}

/** The device nodes a chroot directory's /dev holds: the host's, bound as the runtime binds them for the container. */
export const CHROOT_DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'] as const;

/**
 * The mounts of one chroot directory: a /dev tmpfs and its device nodes (under gVisor its own /dev file system); its
 * /proc, or the mount point of one.
 */
function chrootMounts(dir: string, gvisor: boolean): OciConfig['mounts'] {
  return [
    ...(gvisor
      ? [{ destination: `${dir}/dev`, type: 'dev', source: 'dev', options: ['nosuid', 'noexec'] }]
      : [
          {
            destination: `${dir}/dev`,
            type: 'tmpfs',
            source: 'tmpfs',
            options: ['nosuid', 'noexec', 'strictatime', 'mode=755', 'size=64k'],
          },
          ...CHROOT_DEVICES.map((d) => ({
            destination: `${dir}/dev/${d}`,
            type: 'bind',
            source: `/dev/${d}`,
            options: ['bind', 'nosuid', 'noexec'],
          })),
        ]),
    // Made here so the runtime creates it safely inside the root; a mount point cannot be unlinked or renamed.
    gvisor
      ? { destination: `${dir}/proc`, type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] }
      : { destination: `${dir}/proc`, type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'noexec', 'nodev', 'mode=555', 'size=4k'] },
  ];
}

export interface OciConfig {
  ociVersion: string;
  process: Record<string, unknown>;
  root: { path: string; readonly: boolean };
  hostname: string;
  annotations?: Record<string, string>;
  mounts: Array<{ destination: string; type: string; source: string; options?: string[] }>;
  linux: Record<string, unknown>;
}

function checkInput(input: ContainerConfigInput): void {
  const problems: string[] = [];
  if (input.netnsPath !== undefined && input.privateNetwork) problems.push('netnsPath and privateNetwork exclude each other');
  if (!input.rootfs.startsWith('/')) problems.push(`rootfs must be an absolute path, got ${JSON.stringify(input.rootfs)}`);
  if (input.args.length === 0) problems.push('args must name a program, got []');
  if (!input.cwd.startsWith('/')) problems.push(`cwd must be an absolute path, got ${JSON.stringify(input.cwd)}`);
  if (!(Number.isInteger(input.memoryBytes) && input.memoryBytes >= 16 * 1024 * 1024)) {
    problems.push(`memoryBytes must be an integer of at least 16 MiB, got ${input.memoryBytes}`);
  }
  if (!(input.cpuCount > 0 && input.cpuCount <= 1024)) problems.push(`cpuCount must be above 0 and at most 1024, got ${input.cpuCount}`);
  if (!(Number.isInteger(input.pidsLimit) && input.pidsLimit >= 16))
    problems.push(`pidsLimit must be an integer of at least 16, got ${input.pidsLimit}`);
  if (!(Number.isInteger(input.nofile) && input.nofile >= 64))
    problems.push(`nofile must be an integer of at least 64, got ${input.nofile}`);
  for (const b of input.binds) {
    if (!b.source.startsWith('/') || !b.target.startsWith('/'))
      problems.push(`bind ${b.source} -> ${b.target}: both paths must be absolute`);
  }
  for (const dir of input.chrootDirs ?? []) {
    const problem = chrootDirProblem(dir);
    if (problem) problems.push(problem);
  }
  for (const key of Object.keys(input.env)) {
    if (key === '' || key.includes('='))
      problems.push(`environment variable name ${JSON.stringify(key)} must be non-empty and contain no '='`);
  }
  if (problems.length > 0) throw new Error(`invalid container config: ${problems.join('; ')}`);
}

function idMappings(m: IdMapping) {
  const one = [{ containerID: 0, hostID: m.base, size: m.size }];
  return { uidMappings: one, gidMappings: one };
}

export function renderOciConfig(input: ContainerConfigInput): OciConfig {
  checkInput(input);
  const caps: string[] = input.role === 'build' ? [...BUILD_CAPABILITIES] : [...DEFAULT_CAPABILITIES];
  const seccomp: SeccompProfile | undefined = input.hardened === false ? undefined : renderSeccomp();
  const env = { PATH: DEFAULT_PATH, ...input.env };
  const namespaces: Array<{ type: string; path?: string }> = [
    { type: 'pid' },
    { type: 'mount' },
    { type: 'ipc' },
    { type: 'uts' },
    { type: 'cgroup' },
  ];
  if (input.userns) namespaces.unshift(input.userns.path ? { type: 'user', path: input.userns.path } : { type: 'user' });
  if (input.netnsPath !== undefined) namespaces.push({ type: 'network', path: input.netnsPath });
  else if (input.privateNetwork) namespaces.push({ type: 'network' });

  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: input.uid, gid: input.gid, ...(input.additionalGids?.length ? { additionalGids: input.additionalGids } : {}) },
      args: input.args,
      env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cwd: input.cwd,
      capabilities: { bounding: caps, effective: caps, permitted: caps },
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: input.nofile, soft: input.nofile }],
      noNewPrivileges: false,
      ...(input.oomScoreAdj !== undefined ? { oomScoreAdj: input.oomScoreAdj } : {}),
    },
    root: { path: input.rootfs, readonly: false },
    hostname: input.hostname,
    ...(input.seccompBpf !== undefined && seccomp ? { annotations: { [SECCOMP_BPF_ANNOTATION]: input.seccompBpf } } : {}),
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
      },
      { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
      { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
      // A user namespace may mount sysfs only over a network namespace it owns; else the host's is bound read-only.
      input.userns && input.netnsPath === undefined && !input.privateNetwork
        ? { destination: '/sys', type: 'bind', source: '/sys', options: ['rbind', 'nosuid', 'noexec', 'nodev', 'ro'] }
        : { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
      { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'] },
      ...input.binds.map((b) => ({
        destination: b.target,
        type: 'bind',
        source: b.source,
        options: ['rbind', 'nosuid', 'nodev', b.readonly ? 'ro' : 'rw'],
      })),
      ...(input.chrootDirs ?? []).flatMap((dir) => chrootMounts(dir, input.gvisor === true)),
    ],
    linux: {
      ...(input.userns ? idMappings(input.userns.mapping) : {}),
      cgroupsPath: input.cgroupsPath,
      namespaces,
      resources: {
        devices: [{ allow: false, access: 'rwm' }],
        memory: { limit: input.memoryBytes },
        cpu: { quota: Math.round(input.cpuCount * CPU_PERIOD_US), period: CPU_PERIOD_US },
        pids: { limit: input.pidsLimit },
      },
      maskedPaths: [
        '/proc/acpi',
        '/proc/asound',
        '/proc/kcore',
        '/proc/keys',
        '/proc/latency_stats',
        '/proc/timer_list',
        '/proc/timer_stats',
        '/proc/sched_debug',
        '/proc/scsi',
        '/sys/firmware',
        '/sys/devices/virtual/powercap',
      ],
      readonlyPaths: ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],
      ...(input.followHostMounts ? { rootfsPropagation: 'rslave' } : {}),
      ...(seccomp ? { seccomp } : {}),
    },
  };
}
