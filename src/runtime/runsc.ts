/**
 * runsc (gVisor) as the sandboxes' runtime: the sandbox's processes talk to gVisor's kernel (the Sentry, a user-space
 * kernel in Go), never to the host's; the Sentry itself runs under gVisor's own seccomp filter in a user namespace.
 * The kit drives it like crun and runc (the same bundle, config.json, cgroups, user namespace, network namespace);
 * what differs is said here.
 *
 * - Global flags on every call: the platform (how the Sentry intercepts the sandbox's system calls), the network
 *   taken from the container's network namespace (`--network=sandbox`: gVisor's own network stack takes over the
 *   namespace's eth0 with its address and routes; the host's stack no longer answers on it), raw sockets allowed
 *   (gVisor's iptables, so the transparent proxy template's NAT chain works inside gVisor) and no overlay of its own
 *   (`--overlay2=none`: writes reach the kit's overlay upper dir, which pause to disk, fork and the disk figures read).
 * - `run` sees no /proc/sys/net: runsc decides that a network namespace is the host's when
 *   /proc/sys/net/core/rmem_default exists in it, but kernels since 6.x have that file in every network namespace, so
 *   every namespace looked like the host's ("cannot run with network enabled in root network namespace"). An empty
 *   tmpfs over /proc/sys/net in the call's private mount namespace answers the check the way it was meant; runsc
 *   reads nothing else there.
 * - The network namespace is made before the container (holder process, bridge-network.ts `pending.prepare`) and
 *   joined by path, where crun and runc make it with the container and the kit moves the link in before start
 *   (join-link.ts).
 * - The user namespace is a new one with the kit's mapping, not the one that owns the network namespace: runsc's
 *   gofer cannot join a user namespace by path (setns of a user namespace fails in a multi-threaded Go process).
 *   Nothing is lost: gVisor's own network stack, not the host's, is what the sandbox's NET_ADMIN configures.
 * - The spec's seccomp profile is loaded by gVisor inside the sandbox (`--oci-seccomp`), against gVisor's kernel.
 */

import { DEFAULT_RUNSC_PLATFORM, RUNSC_PLATFORMS, type RunscPlatform, type RuntimeName } from '../contract/runtime-choice';

export { DEFAULT_RUNSC_PLATFORM, RUNSC_PLATFORMS, type RunscPlatform };

/** The flags every runsc call of the kit carries (before the subcommand). */
export function runscFlags(platform: RunscPlatform = DEFAULT_RUNSC_PLATFORM): string[] {
  if (!RUNSC_PLATFORMS.includes(platform))
    throw new Error(`invalid runsc platform ${JSON.stringify(platform)}: expected one of ${RUNSC_PLATFORMS.join(', ')}`);
  return [`--platform=${platform}`, '--network=sandbox', '--net-raw', '--overlay2=none'];
}

/** The empty tmpfs mounted over /proc/sys/net in a runsc call's private mount namespace (see above). */
export const HIDDEN_NET_SYSCTLS = { dir: '/proc/sys/net', options: 'size=4k,mode=555' } as const;

/** Whether the container may join the user namespace that owns its network namespace by path (runsc cannot). */
export function joinsUsernsByPath(runtime: RuntimeName): boolean {
  return runtime !== 'runsc';
}

/**
 * Whether the container makes its own network namespace (with its user namespace) and the kit moves the sandbox's
 * link in between the runtime's `create` and `start` (NetworkAttachment.pending): not under runsc, whose
 * `--network=sandbox` takes the namespace's links over while it makes the sandbox; it gets a namespace made ahead
 * and joins it by path.
 */
export function makesNetworkNamespace(runtime: RuntimeName): boolean {
  return runtime !== 'runsc';
}

/**
 * Whether a filesystem can be attached to a running sandbox (attach-image.ts): not under runsc. A mount the host
 * makes after start does reach a running gVisor sandbox (with `--file-access-mounts=shared`, its bind's source a
 * shared mount and the container a slave of it: tried), but an image server's filesystem also needs a /proc, and
 * gVisor's proc can only be mounted by gVisor itself: at start, from the spec, or later by a process inside holding
 * CAP_SYS_ADMIN, which no sandbox has. A bind of a proc from the host would show the host's processes. So under runsc
 * an image server's filesystem is a layer of the sandbox, there from its start (its image pulled within the create,
 * or preinstalled in the template), and gets its /dev and /proc as every chroot dir does (oci-config.ts).
 */
export function attachesAfterStart(runtime: RuntimeName): boolean {
  return runtime !== 'runsc';
}
