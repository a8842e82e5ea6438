/**
 * The names of the OCI runtimes and of gVisor's platforms, as the stack config, the CLI flags and the runtime take
 * them (src/runtime/runsc.ts says what runsc and each platform mean).
 */

/** crun and runc share the host's kernel; runsc is gVisor; auto takes crun, or runc where crun is missing. */
export const RUNTIME_CHOICES = ['crun', 'runc', 'runsc', 'auto'] as const;
export type RuntimeChoice = (typeof RUNTIME_CHOICES)[number];
export type RuntimeName = Exclude<RuntimeChoice, 'auto'>;

/** How gVisor's kernel intercepts the sandbox's system calls. */
export const RUNSC_PLATFORMS = ['systrap', 'ptrace', 'kvm'] as const;
export type RunscPlatform = (typeof RUNSC_PLATFORMS)[number];

/** gVisor's own default: needs no /dev/kvm and is faster than ptrace. */
export const DEFAULT_RUNSC_PLATFORM: RunscPlatform = 'systrap';
