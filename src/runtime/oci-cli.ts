/**
 * Drives one OCI runtime CLI (crun, runc or runsc) with the kit's own --root. Calls that need it run inside a mount
 * namespace of their own (private-mounts.c, a slave of the host's mounts, so a sandbox disk the host unmounts
 * meanwhile is not held here; sandbox-disk.ts): there the overlay root filesystem is mounted (the container inherits
 * it and the host's mount table never sees it, so nothing stays mounted once the container is gone) and, for crun on
 * a hybrid host, /sys/fs/cgroup/unified is hidden so crun works in v1 mode; runsc's `run` gets /proc/sys/net hidden
 * (runsc.ts). A detached container inherits the CLI's stdio, so it gets a file, never a pipe.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CGROUP_UNIFIED, type RuntimeSelection } from './cgroup-layout';
import { exec, type ExecResult } from '../util/exec';
import { bundledProgram } from './bundled-program';
import { DEFAULT_RUNSC_PLATFORM, HIDDEN_NET_SYSCTLS, runscFlags, type RunscPlatform } from './runsc';
import type { ContainerState, RuntimeName } from './types';

export interface OverlayMount {
  /** Read-only layers, topmost first. */
  lower: string[];
  upper: string;
  work: string;
  target: string;
}

const UNSAFE_IN_OPTIONS = /[:,\s\\]/;

export function overlayOptions(o: OverlayMount): string {
  const bad = [...o.lower, o.upper, o.work].filter((p) => UNSAFE_IN_OPTIONS.test(p) || !p.startsWith('/'));
  if (bad.length > 0) throw new Error(`overlay paths must be absolute and contain no ':', ',', '\\\\' or white space: ${bad.join(', ')}`);
  if (o.lower.length === 0) throw new Error('overlay needs at least one lower layer');
  return `lowerdir=${o.lower.join(':')},upperdir=${o.upper},workdir=${o.work}`;
}

/**
 * Where a container's root file system and bind sources are mounted for the runtime, in the call's private mount
 * namespace only (each call's namespace starts with the host's view, where these are empty, and mounts its own). A
 * container in a user namespace mounts as that namespace's root, which may not search the kit's or a caller's
 * private directories: here every path is searchable, whatever the real ones are. The directory and its empty mount
 * points are made on the host once (writeStageTable), never mounted on there.
 */
export const STAGE_DIR = '/run/sandbox-kit-stage';
export const STAGED_ROOTFS = `${STAGE_DIR}/rootfs`;

/** A bind source and the mount point in the stage it is mounted on for the runtime. */
export interface StagedBind {
  source: string;
  target: string;
}

/**
 * Each bind source with its staged path, in order: `d<i>` for a directory, `f<i>` for anything else (a bind mount
 * needs a mount point of its kind). A source that is missing is staged as a file, and its mount then fails. Made
 * once per call: the container's config names the targets, the stage's table mounts the same.
 */
export function stagedBinds(sources: string[]): StagedBind[] {
  return sources.map((source, i) => ({
    source,
    target: `${STAGE_DIR}/${fs.statSync(source, { throwIfNoEntry: false })?.isDirectory() ? 'd' : 'f'}${i}`,
  }));
}

/** A path as one fstab field: white space and backslashes as octal escapes (fstab(5)); libmount reads them back. */
export function fstabField(p: string): string {
  return p.replace(/[\\\s]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The mounts that stage a call, as an fstab for one `mount -a -T` (which mounts them in order, in one process): each
 * bind source on its staged path, then the overlay on its target.
 */
export function stageTable(binds: StagedBind[], overlay: OverlayMount | undefined): string {
  const lines = binds.map((b) => `${fstabField(b.source)} ${fstabField(b.target)} none bind 0 0`);
  if (overlay) lines.push(`sandbox-kit ${fstabField(overlay.target)} overlay ${overlayOptions(overlay)} 0 0`);
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the table that stages `binds` and `overlay` to `file` (a directory of the caller's own), after making the
 * stage's mount points on the host (idempotent, for every caller at once).
 */
export function writeStageTable(file: string, binds: StagedBind[], overlay: OverlayMount | undefined): void {
  if (overlay && overlay.target !== STAGED_ROOTFS) throw new Error(`a staged overlay must target ${STAGED_ROOTFS}`);
  fs.mkdirSync(STAGE_DIR, { recursive: true, mode: 0o711 });
  fs.mkdirSync(STAGED_ROOTFS, { recursive: true, mode: 0o755 });
  for (const { target } of binds) {
    if (path.basename(target).startsWith('d')) fs.mkdirSync(target, { recursive: true, mode: 0o755 });
    else fs.closeSync(fs.openSync(target, 'a', 0o644));
  }
  fs.writeFileSync(file, stageTable(binds, overlay), { mode: 0o600 });
}

export interface PrivateNamespaceSetup {
  hideUnified: boolean;
  /** An empty /proc/sys/net (runsc's `run`, see runsc.ts). */
  hideNetSysctls?: boolean;
  /** The stage's mount table (writeStageTable), which mounts the overlay too. */
  stageTable?: string;
}

/** The empty tmpfs mounted over /sys/fs/cgroup/unified for crun on a hybrid host (cgroup-layout.ts). */
const HIDDEN_UNIFIED = { dir: CGROUP_UNIFIED, options: 'size=4k,mode=755' } as const;

/** The build's private-mounts program (private-mounts.c); undefined when it is missing or not executable. */
export function privateMountsProgram(): string | undefined {
  return bundledProgram('private-mounts');
}

/**
 * argv running `argv` in a mount namespace of its own (a slave of the host's) after the given mounts: the stage's
 * table, then the tmpfs hiding the unified hierarchy and /proc/sys/net; `argv` itself when none is needed. Through
 * the private-mounts program when the build has it (`program`; null: without it), else `unshare`, a shell and
 * util-linux's `mount`, whose read of the whole mount table grows with the sandboxes running (10 ms with 26 mounts,
 * 42 ms with 424).
 */
export function inPrivateMountNamespace(
  setup: PrivateNamespaceSetup,
  argv: string[],
  program: string | null = privateMountsProgram() ?? null,
): string[] {
  const hidden = [...(setup.hideUnified ? [HIDDEN_UNIFIED] : []), ...(setup.hideNetSysctls ? [HIDDEN_NET_SYSCTLS] : [])];
  if (hidden.length === 0 && !setup.stageTable) return argv;
  const table = setup.stageTable !== undefined ? [setup.stageTable] : [];
  if (program !== null) {
    const tmpfs = hidden.flatMap((h) => ['--tmpfs', h.dir, h.options]);
    return [program, ...table.flatMap((t) => ['--table', t]), ...tmpfs, '--', ...argv];
  }
  const steps = [
    ...(table.length > 0 ? ['mount -a -T "$1"', 'shift'] : []),
    ...hidden.map((h) => `mount -t tmpfs -o ${h.options} sandbox-kit-hide ${h.dir}`),
    'exec "$@"',
  ];
  // A slave of the host's mounts: the copies of the sandboxes' disks this namespace starts with go as soon as the host
  // unmounts them (sandbox-disk.ts), and nothing mounted here reaches the host.
  return ['unshare', '-m', '--propagation', 'slave', 'sh', '-ec', steps.join('\n'), 'sh', ...table, ...argv];
}

export interface OciState {
  id: string;
  status: ContainerState | 'created' | 'creating';
  pid?: number;
}

function toState(raw: { id?: string; status?: string; pid?: number }): OciState {
  const status =
    raw.status === 'running' || raw.status === 'paused' || raw.status === 'created' || raw.status === 'creating' ? raw.status : 'stopped';
  return { id: String(raw.id), status, ...(raw.pid && status !== 'stopped' ? { pid: raw.pid } : {}) };
}

export class OciCli {
  /** Flags every call carries before the subcommand (runsc's, runsc.ts). */
  private readonly flags: string[];

  constructor(
    readonly selection: RuntimeSelection,
    readonly binary: string,
    readonly stateDir: string,
    runscPlatform: RunscPlatform = DEFAULT_RUNSC_PLATFORM,
  ) {
    this.flags = selection.name === 'runsc' ? runscFlags(runscPlatform) : [];
  }

  get name(): RuntimeName {
    return this.selection.name;
  }

  /** A `run` (foreground or detached) needs more of the private mount namespace than the other calls. */
  get hideNetSysctlsOnRun(): boolean {
    return this.selection.name === 'runsc';
  }

  argv(args: string[]): string[] {
    return [this.binary, '--root', this.stateDir, ...this.flags, ...args];
  }

  /** With `bare`, the runtime runs in the caller's mount namespace, never hiding `unified` (see start). */
  private call(args: string[], timeoutMs = 30_000, bare = false): Promise<ExecResult> {
    const argv = this.argv(args);
    return exec(bare ? argv : inPrivateMountNamespace({ hideUnified: this.selection.hideUnified }, argv), { timeoutMs });
  }

  private async callOk(args: string[], timeoutMs?: number, bare = false): Promise<string> {
    const r = await this.call(args, timeoutMs, bare);
    if (r.code !== 0) throw new Error(`${this.name} ${args.join(' ')} failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`);
    return r.stdout;
  }

  /**
   * `run --detach` with the root file system mounted first (one process chain, one spawn); with `createOnly`,
   * `create` instead (the container's namespaces made, its first process waiting for `start`). Output of the runtime
   * and of the container goes to `logFile`. Resolves to the runtime's exit code.
   */
  runDetached(
    id: string,
    bundle: string,
    staged: { overlay: OverlayMount; binds: StagedBind[] },
    logFile: string,
    pidFile: string,
    o: { createOnly?: boolean; timeoutMs?: number } = {},
  ): Promise<number> {
    const timeoutMs = o.timeoutMs ?? 30_000;
    fs.mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    const argv = this.stagedArgv(bundle, staged, [
      ...(o.createOnly ? ['create'] : ['run', '--detach']),
      '--pid-file',
      pidFile,
      '--bundle',
      bundle,
      id,
    ]);
    return exec(argv, { timeoutMs, outputFile: logFile }).then((r) => r.code);
  }

  /**
   * argv of a runtime call that makes a container (`run`, `create`) over a staged root file system: the stage's table
   * is written to `<dir>/stage.fstab` (writeStageTable) and mounted in the call's own namespace before the runtime runs.
   */
  stagedArgv(dir: string, staged: { overlay: OverlayMount; binds: StagedBind[] }, args: string[]): string[] {
    const stageTable = path.join(dir, 'stage.fstab');
    writeStageTable(stageTable, staged.binds, staged.overlay);
    return inPrivateMountNamespace(
      { stageTable, hideUnified: this.selection.hideUnified, hideNetSysctls: this.hideNetSysctlsOnRun },
      this.argv(args),
    );
  }

  /**
   * Starts the first process of a container made by `runDetached` with `createOnly`. Bare: a start only releases
   * that process (the container's namespaces and cgroups were made by the create), and crun takes a hybrid host only
   * where it makes cgroups. A private mount namespace would cost a copy of every mount of the host, the sandboxes'
   * disks among them: about 2 ms with no sandbox running, 5 ms with 200 (`unshare -m true` against `true`).
   */
  start(id: string): Promise<string> {
    return this.callOk(['start', id], undefined, true);
  }

  async state(id: string): Promise<OciState | undefined> {
    const r = await this.call(['state', id]);
    if (r.code !== 0) {
      if (/does not exist|not exist|No such file/i.test(r.stderr)) return undefined;
      throw new Error(`${this.name} state ${id} failed (exit ${r.code}): ${r.stderr.trim()}`);
    }
    return toState(JSON.parse(r.stdout) as { id: string; status: string; pid: number });
  }

  async list(): Promise<OciState[]> {
    if (!fs.existsSync(this.stateDir)) return [];
    const out = (await this.callOk(['list', '--format', 'json'])).trim();
    if (out === '' || out === 'null') return [];
    return (JSON.parse(out) as Array<{ id: string; status: string; pid: number }>).map(toState);
  }

  /** argv of `exec` in a running container (for diagnostics and tests; sandboxes are driven through the agent). */
  execArgv(id: string, argv: string[]): string[] {
    return inPrivateMountNamespace({ hideUnified: this.selection.hideUnified }, this.argv(['exec', id, ...argv]));
  }

  pause(id: string): Promise<string> {
    return this.callOk(['pause', id]);
  }

  resume(id: string): Promise<string> {
    return this.callOk(['resume', id]);
  }

  kill(id: string, signal = 'KILL'): Promise<string> {
    return this.callOk(['kill', id, signal]);
  }

  /** Kills every process of the container and removes its state and cgroup; a container that is gone is fine. */
  async remove(id: string): Promise<void> {
    const r = await this.call(['delete', '--force', id]);
    if (r.code !== 0 && !/does not exist|not exist|No such file/i.test(r.stderr)) {
      throw new Error(`${this.name} delete --force ${id} failed (exit ${r.code}): ${r.stderr.trim()}`);
    }
  }
}
