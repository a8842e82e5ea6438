/**
 * The runtime's surface, as the platform and the template builder see it. A sandbox is an OCI container (crun, or
 * runc as a drop-in, or runsc for gVisor's kernel) over an overlayfs root: read-only layers below, a per-sandbox upper dir. Everything here is
 * implemented in src/runtime; the platform never calls an OCI runtime or mounts anything itself.
 */

import type { RuntimeName } from '../contract/runtime-choice';
import type { EgressPolicy } from './network/egress-policy';

/** What a sandbox uses right now (usage.ts reads it from its cgroup and upper dir). */
export interface SandboxUsage {
  /** CPU time used since the sandbox started, in microseconds (all its processes). */
  cpuUsageUsec: number;
  /** Memory in use, without the page cache the kernel can drop (inactive file pages). */
  memoryUsedBytes: number;
  /** Page cache (file-backed memory). */
  memoryCacheBytes: number;
  /** Bytes of files the sandbox wrote: its disk's used blocks, or its upper dir's allocated blocks without a disk. */
  diskUsedBytes: number;
  /** Size of the file system its writes go to. */
  diskTotalBytes: number;
}

/**
 * Which OCI runtime CLI drives containers (crun and runc share the host's kernel; runsc is gVisor, runsc.ts); `auto`
 * picks crun or runc, whichever works with this host's cgroup layout.
 */
export type { RuntimeChoice, RuntimeName } from '../contract/runtime-choice';

/** Where a sandbox's network comes from: a network namespace on the sandbox network, made by a SandboxNetwork. */
export interface NetworkAttachment {
  /** Path of the sandbox's network namespace, e.g. /run/netns/<name> (named once it exists: see `pending`). */
  netnsPath: string;
  /** The sandbox's address on the sandbox network: the gateway and the platform reach the agent here. */
  address: string;
  /** The user namespace that owns the network namespace (userns.ts); the container joins it. */
  usernsPath?: string;
  /**
   * Present while the network namespace is not made yet (its link waits on the bridge's side, its rules in place).
   * Either the container makes it, owned by its own new user namespace, and the runtime calls `join(pid)` with the
   * container's pid once it exists, which moves the link in, configures it and names the namespace `netnsPath`; or,
   * for a runtime that can only join one by path (runsc.ts), `prepare()` makes it ahead, as a runtime would, and
   * names it. Each attachment is joined once. `made` settles when the link and its rules are made: attach may
   * return before, so the caller's disk, files and container are made meanwhile; join and prepare wait for it (and
   * reject with its error), so nothing of the sandbox runs before its rules are in place. `alongside` (the
   * runtime's start) runs once the link is in the namespace, while its address and route are configured; the join
   * resolves when both are done, and rejects with the first failure.
   */
  pending?: { made: Promise<void>; join(pid: number, alongside?: () => Promise<unknown>): Promise<void>; prepare(): Promise<void> };
}

/** Gives each sandbox a network namespace on a bridge (the lab's sandbox host, or the host itself on AWS). */
export interface SandboxNetwork {
  /** `policy`: the sandbox's egress policy, in place before anything of it can leave (a network that can enforce one). */
  attach(sandboxID: string, policy?: EgressPolicy): Promise<NetworkAttachment>;
  /** Idempotent: removing what is already gone is not an error. */
  detach(sandboxID: string): Promise<void>;
  /** Attachments that exist now (found from the system, so they survive a platform restart). */
  list(): Promise<Map<string, NetworkAttachment>>;
  /**
   * Replaces the egress policy of an attached sandbox (undefined or empty: none), enforced outside the sandbox. A
   * network without it cannot enforce egress rules, and the platform refuses them.
   */
  setEgressPolicy?(sandboxID: string, policy: EgressPolicy | undefined): Promise<void>;
}

/** How to start one sandbox. */
export interface SandboxSpec {
  /** Lower-case letters and digits (the platform makes it). */
  sandboxID: string;
  /** Read-only root filesystem layers, topmost first; the last is a base root filesystem. */
  layers: string[];
  memoryMB: number;
  cpuCount: number;
  /** The size of the sandbox's disk (sandbox-disk.ts): its writes beyond it get ENOSPC. Default: the runtime's. */
  diskMB?: number;
  network: NetworkAttachment;
  /** Extra arguments for the agent after the runtime's own (port). */
  agentArgs?: string[];
  /**
   * The sandbox's access token: the agent refuses every call without it from its first connection on (it never
   * waits for /init to learn it). It reaches the agent through its environment, which only root in the sandbox can read.
   */
  accessToken?: string;
  /** Hostname inside the sandbox; default the sandbox ID. */
  hostname?: string;
  /** Start again from the filesystem changes `stop` kept (pause to disk, then resume). */
  restart?: boolean;
  /** Host files bound read-only into the sandbox (its egress CA's trust stores), each at an absolute path inside. */
  readOnlyFiles?: Array<{ source: string; target: string }>;
  /** Host directories bound read-write into the sandbox (volumes), each at an absolute path inside. */
  volumes?: Array<{ source: string; target: string }>;
  /** A directory made by `copyChanges`: a copy of it becomes the new sandbox's own changes (fork). */
  changesFrom?: string;
  /**
   * Directories inside the sandbox that programs enter with chroot (MCP image servers' filesystems): each gets a
   * minimal /dev (oci-config.ts, ContainerConfigInput.chrootDirs) and the container's own /proc (chroot-proc.ts).
   * Not under runsc.
   */
  chrootDirs?: string[];
  /**
   * A directory inside the sandbox, read-only there, under which the host attaches filesystems after start
   * (OciSandboxRuntime.attachImage; attach-image.ts). Not under runsc.
   */
  attachDir?: string;
}

export type ContainerState = 'running' | 'paused' | 'stopped';

export interface SandboxStatus {
  sandboxID: string;
  state: ContainerState;
  /** The container's init (its PID on the host), when running or paused. */
  pid?: number;
}

export interface SandboxRuntime {
  /** Which CLI was chosen, for messages and status. */
  readonly name: RuntimeName;
  /**
   * Mounts the root filesystem, writes the bundle and starts the container with the agent as its service (under
   * tini as PID 1). Resolves once the container runs; the caller probes the agent over HTTP. On failure nothing
   * is left behind (mount, upper dir, cgroup, runtime state).
   */
  create(spec: SandboxSpec): Promise<SandboxStatus>;
  /**
   * Ends every process and frees the sandbox's memory and cgroups, keeping its filesystem changes for a later
   * create with `restart` (pause to disk). A memory checkpoint (CRIU) would be taken here, when one is available.
   */
  stop(sandboxID: string): Promise<void>;
  /** Whether the sandbox's filesystem changes are kept (running, paused, or stopped by `stop`). */
  hasChanges(sandboxID: string): boolean;
  /**
   * Copies the sandbox's filesystem changes to `target` (a new directory), as they are at this moment: a running
   * sandbox is frozen for the copy and thawed after it. The copy is a valid read-only layer and upper dir.
   */
  copyChanges(sandboxID: string, target: string): Promise<void>;
  /** Freezes every process of the sandbox (cgroup freezer). */
  pause(sandboxID: string): Promise<void>;
  resume(sandboxID: string): Promise<void>;
  /** Removes every trace: processes, cgroups, mounts, the upper dir, the runtime's state. Idempotent. */
  kill(sandboxID: string): Promise<void>;
  status(sandboxID: string): Promise<SandboxStatus | undefined>;
  /** Every sandbox this runtime's state dir knows, to reconcile after a restart. */
  list(): Promise<SandboxStatus[]>;
  /**
   * Tells `listener` of a sandbox that ended without a kill or stop, and why (under runsc an OOM ends the whole
   * sandbox, end-watch.ts); its traces stay for the caller's kill. Its connections are reset by that kill (after the
   * listener took it out of the routing), or when the listener's promise settles without one. Absent: not watched.
   */
  onEnded?(listener: (sandboxID: string, why: string) => void | Promise<void>): void;
  /**
   * After a platform restart: a sandbox of the earlier run that the platform keeps (running or paused in memory),
   * at its network attachment's address, taken back into the runtime's care (under runsc its end is watched again).
   */
  adopt?(sandboxID: string, address: string): Promise<void>;
  /** What the sandbox uses now (CPU time, memory, its writes); undefined when it is gone. Absent: not measurable. */
  usage?(sandboxID: string): SandboxUsage | undefined;
  /**
   * Mounts an image's filesystem (its read-only layers, topmost first) at `<attachDir>/<key>/rootfs` inside the
   * running sandbox created with that attachDir (SandboxSpec.attachDir). Absent: not done by this runtime.
   */
  attachImage?(sandboxID: string, o: { key: string; layers: string[]; attachDir: string }): Promise<void>;
  /** Whether attachImage works on this runtime's running sandboxes (not under runsc: runsc.ts); absent: it does not. */
  readonly attachesAfterStart?: boolean;
  /** Writes (null: removes) files beside an attached filesystem, `<attachDir>/<key>/<name>` inside (read-only there). */
  setAttachedFiles?(sandboxID: string, key: string, files: Record<string, string | null>): void;
  /** Why the host's admission would refuse a sandbox of this size now, or undefined when it would take it. */
  admissionProblem?(request: { memoryMB: number; cpuCount: number }): string | undefined;
}

/** One template build step run in a one-shot container; its changes to the root filesystem become a layer. */
export interface StepRun {
  /** Read-only layers below, topmost first. */
  layers: string[];
  /** Empty directory that receives the step's changes (the overlay upper dir): the new layer. */
  layerDir: string;
  /** argv inside the container, e.g. ['/bin/bash', '-c', 'apt-get install -y curl']. */
  argv: string[];
  user: string;
  workdir: string;
  env: Record<string, string>;
  /** Read-only host paths bound into the step (a COPY's extracted files), host path -> container path. */
  binds?: Array<{
    source: string;
    target: string;
    /**
     * The step's root is not the host's: a source the platform made for this step (a COPY's extracted files) is
     * handed to it (owned by its mapped ids), so every file is readable whatever its mode. Others stay as they are.
     */
    adopt?: boolean;
  }>;
  /**
   * 'egress': a network namespace of the step's own whose only way out is the platform's build egress proxy
   * (build-egress.ts; http_proxy and https_proxy are set): the Debian mirror and package registries, never
   * loopback, private or link-local addresses. 'none': a namespace of the step's own with only loopback, for the
   * build's final start/ready check (a start command may listen on any port or change firewall rules).
   */
  network: 'egress' | 'none';
  memoryMB: number;
  cpuCount: number;
  timeoutMs: number;
  /** Each output line is kept up to this many bytes, the rest counted, never buffered (default 1 MiB). */
  maxLineBytes?: number;
  /** The step's disk in MB (its writes past it get ENOSPC); default: the executor's. */
  diskMB?: number;
  /**
   * Called before the exit code is returned when the step failed with its disk full: `diskMB`, the size it had;
   * `cut`: smaller than asked, the room left on the data root under limits.diskOvercommit (admission.ts).
   */
  onDiskFull?(diskMB: number, cut: boolean): void;
  /** Every line of stdout and stderr as it comes; `cutBytes`: how many bytes of a longer line were cut. */
  onLine(stream: 'stdout' | 'stderr', line: string, cutBytes?: number): void;
}

export interface StepExecutor {
  /** Resolves to the exit code; rejects only when the step could not be run at all. */
  run(step: StepRun): Promise<number>;
  /** Stops what it keeps between steps (the build egress proxy and its socket); a later step starts it again. */
  close?(): Promise<void>;
}

/** Base root filesystems made by mmdebstrap, cached per suite (and package set). */
export interface BaseImages {
  /** Debian suites this kit can make offline from the Debian mirror, e.g. ['bookworm', 'stable', 'trixie']. */
  readonly supported: readonly string[];
  /** The root filesystem directory for `debian:<tag>`; builds it the first time (progress through onLine). */
  rootfs(image: string, onLine?: (line: string) => void): Promise<string>;
}
