import { renderOciConfig, type ContainerConfigInput } from '../../../src/runtime/oci-config';
import { chrootProcArgv } from '../../../src/runtime/chroot-proc';
import { CLONE_NEWUSER, renderSeccomp } from '../../../src/runtime/seccomp';

const input: ContainerConfigInput = {
  rootfs: '/var/lib/sk/abc/rootfs',
  args: ['/opt/sandbox-kit/tini', '-s', '--', '/opt/sandbox-kit/node', 'agent.js'],
  env: { HOME: '/root', A: 'b=c' },
  cwd: '/',
  uid: 0,
  gid: 0,
  hostname: 'abc',
  netnsPath: '/run/netns/x-abc',
  memoryBytes: 512 * 1024 * 1024,
  cpuCount: 2,
  pidsLimit: 4096,
  cgroupsPath: '/sandbox-kit-x/abc',
  binds: [{ source: '/usr/bin/node', target: '/opt/sandbox-kit/node', readonly: true }],
  nofile: 20000,
};

describe('renderOciConfig', () => {
  test('limits, namespaces, process and binds of a sandbox', () => {
    const c = renderOciConfig(input);
    expect(c.root).toEqual({ path: '/var/lib/sk/abc/rootfs', readonly: false });
    expect(c.hostname).toBe('abc');
    expect(c.linux.cgroupsPath).toBe('/sandbox-kit-x/abc');
    expect(c.linux.namespaces).toEqual([
      { type: 'pid' },
      { type: 'mount' },
      { type: 'ipc' },
      { type: 'uts' },
      { type: 'cgroup' },
      { type: 'network', path: '/run/netns/x-abc' },
    ]);
    expect(c.linux.resources).toEqual({
      devices: [{ allow: false, access: 'rwm' }],
      memory: { limit: 536870912 },
      cpu: { quota: 200000, period: 100000 },
      pids: { limit: 4096 },
    });
    expect(c.process.env).toEqual(['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/root', 'A=b=c']);
    expect(c.process.rlimits).toEqual([{ type: 'RLIMIT_NOFILE', hard: 20000, soft: 20000 }]);
    expect(c.process.noNewPrivileges).toBe(false);
    expect(c.process.terminal).toBe(false);
    expect(c.process.oomScoreAdj).toBeUndefined();
    expect(c.mounts.at(-1)).toEqual({
      destination: '/opt/sandbox-kit/node',
      type: 'bind',
      source: '/usr/bin/node',
      options: ['rbind', 'nosuid', 'nodev', 'ro'],
    });
    const caps = (c.process.capabilities as { bounding: string[] }).bounding;
    expect(caps).toEqual(expect.arrayContaining(['CAP_CHOWN', 'CAP_SETUID', 'CAP_NET_ADMIN', 'CAP_NET_RAW']));
    expect(caps).not.toEqual(expect.arrayContaining(['CAP_SYS_ADMIN']));
  });

  test('host network (no network namespace), a private one, half CPUs, oom protection', () => {
    const { netnsPath: _drop, ...host } = input;
    expect((renderOciConfig(host).linux.namespaces as Array<{ type: string }>).map((n) => n.type)).not.toContain('network');
    expect(renderOciConfig({ ...host, privateNetwork: true }).linux.namespaces).toContainEqual({ type: 'network' });
    expect((renderOciConfig({ ...input, cpuCount: 0.5 }).linux.resources as { cpu: unknown }).cpu).toEqual({
      quota: 50000,
      period: 100000,
    });
    expect(renderOciConfig({ ...input, oomScoreAdj: -1000 }).process.oomScoreAdj).toBe(-1000);
  });

  test('a new network namespace with a new user namespace that owns it, and no hooks', () => {
    const { netnsPath: _drop, ...rest } = input;
    const c = renderOciConfig({ ...rest, privateNetwork: true, userns: { mapping: { base: 100000, size: 65536 } } });
    expect(c.linux.namespaces).toEqual(expect.arrayContaining([{ type: 'user' }, { type: 'network' }]));
    // It owns its network namespace, so it mounts a sysfs of its own (not the host's, bound).
    expect(c.mounts.find((m) => m.destination === '/sys')?.type).toBe('sysfs');
    // The link is moved in by the kit between create and start, not by a hook the runtime runs.
    expect(Object.keys(c)).not.toContain('hooks');
  });

  test('seccomp on by default (off only when asked, for the benchmark); build steps lose NET_ADMIN and NET_RAW', () => {
    expect(renderOciConfig(input).linux.seccomp).toEqual(renderSeccomp());
    expect(renderOciConfig({ ...input, hardened: false }).linux.seccomp).toBeUndefined();
    const build = (renderOciConfig({ ...input, role: 'build' }).process.capabilities as { bounding: string[] }).bounding;
    expect(build).toContain('CAP_CHOWN');
    expect(build).not.toContain('CAP_NET_ADMIN');
    expect(build).not.toContain('CAP_NET_RAW');
  });

  test('the seccomp profile: EPERM for the listed calls and for new user namespaces, ENOSYS for clone3', () => {
    const p = renderSeccomp('x64');
    expect(p.defaultAction).toBe('SCMP_ACT_ALLOW');
    expect(p.architectures).toEqual(['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32']);
    expect(p.syscalls[0]!.names).toEqual(
      expect.arrayContaining(['keyctl', 'bpf', 'userfaultfd', 'perf_event_open', 'mount', 'kexec_load']),
    );
    expect(p.syscalls).toContainEqual({ names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 });
    expect(p.syscalls).toContainEqual({
      names: ['clone', 'unshare'],
      action: 'SCMP_ACT_ERRNO',
      errnoRet: 1,
      args: [{ index: 0, value: CLONE_NEWUSER, valueTwo: CLONE_NEWUSER, op: 'SCMP_CMP_MASKED_EQ' }],
    });
    expect(renderSeccomp('arm64').architectures).toEqual(['SCMP_ARCH_AARCH64', 'SCMP_ARCH_ARM']);
    expect(() => renderSeccomp('riscv64')).toThrow('no seccomp profile for CPU architecture riscv64: supported x64, arm64');
  });

  test('a chroot dir gets a /dev of six nodes and a mount point for its /proc, after every mount of the sandbox', () => {
    const dir = '/opt/mcp-images/mcp_time/rootfs';
    const c = renderOciConfig({ ...input, chrootDirs: [dir] });
    expect(c.mounts.slice(-8).map((m) => [m.destination, m.type, m.source])).toEqual([
      [`${dir}/dev`, 'tmpfs', 'tmpfs'],
      ...['null', 'zero', 'full', 'random', 'urandom', 'tty'].map((d) => [`${dir}/dev/${d}`, 'bind', `/dev/${d}`]),
      [`${dir}/proc`, 'tmpfs', 'tmpfs'],
    ]);
    expect(c.mounts.filter((m) => m.destination.startsWith(dir))).toHaveLength(8);
    // The sandbox's own /proc is the only proc mounted by the runtime; the host binds it into the chroot dir later.
    expect(c.mounts.filter((m) => m.type === 'proc').map((m) => m.destination)).toEqual(['/proc']);
    expect(chrootProcArgv(4242, dir)).toEqual([
      'mount',
      '--namespace',
      '4242',
      '--no-canonicalize',
      '--no-mtab',
      '--rbind',
      '/proc',
      `${dir}/proc`,
    ]);
    expect(() => chrootProcArgv(4242, '/opt/../etc')).toThrow('chroot dir "/opt/../etc" must be an absolute path of plain names');
    expect(() => chrootProcArgv(0, dir)).toThrow('not a process ID: 0');
    // Only a sandbox that attaches filesystems later follows the host's mounts (crun's default is private).
    expect(renderOciConfig({ ...input, followHostMounts: true }).linux.rootfsPropagation).toBe('rslave');
    expect(c.linux.rootfsPropagation).toBeUndefined();
    expect(renderOciConfig(input).mounts.some((m) => m.destination.startsWith('/opt/mcp-images'))).toBe(false);
  });

  test("under runsc a chroot dir gets a proc and a /dev of gVisor's own, mounted by the runtime; no host node", () => {
    const dir = '/opt/mcp-images/mcp_time/rootfs';
    const c = renderOciConfig({ ...input, chrootDirs: [dir], gvisor: true });
    expect(c.mounts.filter((m) => m.destination.startsWith(dir)).map((m) => [m.destination, m.type, m.source])).toEqual([
      [`${dir}/dev`, 'dev', 'dev'],
      [`${dir}/proc`, 'proc', 'proc'],
    ]);
  });

  test('every bad input at once, each named', () => {
    expect(() =>
      renderOciConfig({
        ...input,
        rootfs: 'rel',
        args: [],
        memoryBytes: 1024,
        cpuCount: 0,
        env: { 'A=B': 'x' },
        privateNetwork: true,
        chrootDirs: ['/opt/x/../../etc', 'rel'],
      }),
    ).toThrow(
      /netnsPath and privateNetwork exclude each other; rootfs must be an absolute path, got "rel"; args must name a program, got \[\]; memoryBytes must be an integer of at least 16 MiB, got 1024; cpuCount must be above 0 and at most 1024, got 0; chroot dir "\/opt\/x\/..\/..\/etc" must be an absolute path of plain names \(letters, digits, . _ -\); chroot dir "rel" must .*; environment variable name "A=B"/,
    );
  });
});
