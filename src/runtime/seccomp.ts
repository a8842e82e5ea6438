/**
 * The seccomp filter of every sandbox and build step (OCI `linux.seccomp`). Pure.
 *
 * A deny list over a default of "allow", in the spirit of the container engines' default profiles (the syscalls
 * they document as blocked): what is refused is kernel attack surface a sandbox has no business with (key rings,
 * BPF, perf, userfaultfd, io_uring, module and kexec loading, file handles, mounts, clocks, swap, reboot) and the
 * creation of new user namespaces (`clone`/`unshare` with CLONE_NEWUSER), the door to most container escapes.
 * `clone3` answers ENOSYS, so the C library falls back to `clone`, whose flags the filter can see.
 * A refused call fails with EPERM, as it would without the capability, so programs take their usual fallback.
 *
 * Why a deny list: the sandbox is a whole Debian system (apt, compilers, browsers, language runtimes); an allow
 * list of the engines' size would break those the day the C library starts using a newer call, for the same
 * protection against the calls above. Calls of other ABIs on the same CPU (i386 and x32 on x86-64) are filtered
 * alike; the kernel kills a process that uses an ABI the filter does not name.
 */

export const BLOCKED_SYSCALLS = [
  'acct',
  'add_key',
  'bpf',
  'clock_adjtime',
  'clock_settime',
  'create_module',
  'delete_module',
  'fanotify_init',
  'finit_module',
  'fsconfig',
  'fsmount',
  'fsopen',
  'fspick',
  'get_kernel_syms',
  'init_module',
  'io_uring_enter',
  'io_uring_register',
  'io_uring_setup',
  'ioperm',
  'iopl',
  'kexec_file_load',
  'kexec_load',
  'keyctl',
  'lookup_dcookie',
  'mount',
  'mount_setattr',
  'move_mount',
  'name_to_handle_at',
  'nfsservctl',
  'open_by_handle_at',
  'open_tree',
  'perf_event_open',
  'pivot_root',
  'query_module',
  'quotactl',
  'reboot',
  'request_key',
  'setns',
  'settimeofday',
  'stime',
  'swapoff',
  'swapon',
  'sysfs',
  '_sysctl',
  'umount',
  'umount2',
  'uselib',
  'userfaultfd',
  'ustat',
  'vm86',
  'vm86old',
] as const;

/** CLONE_NEWUSER from <linux/sched.h>. */
export const CLONE_NEWUSER = 0x10000000;
const EPERM = 1;
const ENOSYS = 38;

export interface SeccompRule {
  names: string[];
  action: 'SCMP_ACT_ERRNO';
  errnoRet: number;
  args?: Array<{ index: number; value: number; valueTwo: number; op: 'SCMP_CMP_MASKED_EQ' }>;
}

export interface SeccompProfile {
  defaultAction: 'SCMP_ACT_ALLOW';
  architectures: string[];
  syscalls: SeccompRule[];
}

const ARCHITECTURES: Record<string, string[]> = {
  x64: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
  arm64: ['SCMP_ARCH_AARCH64', 'SCMP_ARCH_ARM'],
};

/** The profile for a CPU architecture as Node names it (`process.arch`). */
export function renderSeccomp(arch: string = process.arch): SeccompProfile {
  const architectures = ARCHITECTURES[arch];
  if (!architectures)
    throw new Error(`no seccomp profile for CPU architecture ${arch}: supported ${Object.keys(ARCHITECTURES).join(', ')}`);
  return {
    defaultAction: 'SCMP_ACT_ALLOW',
    architectures,
    syscalls: [
      { names: [...BLOCKED_SYSCALLS], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
      { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
      {
        names: ['clone', 'unshare'],
        action: 'SCMP_ACT_ERRNO',
        errnoRet: EPERM,
        args: [{ index: 0, value: CLONE_NEWUSER, valueTwo: CLONE_NEWUSER, op: 'SCMP_CMP_MASKED_EQ' }],
      },
    ],
  };
}
