/**
 * SandboxRuntime over an OCI runtime CLI: one bundle directory per sandbox (config.json, the overlay's upper and
 * work dirs, the console log), one `run --detach` per create. See oci-cli.ts for how mounts stay private.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_AGENT_PORT } from '../contract/agent-port';
import { AGENT_TOKEN_ENV, agentArgv, checkAgentPayload, defaultAgentPayload, payloadBinds, type AgentPayload } from './agent-payload';
import { classifyCgroupLayout, readCgroupFacts, selectRuntime, type CgroupLayoutInfo } from './cgroup-layout';
import { hostCgroupMounts, removeCgroup } from './cgroups';
import type { CgroupMount } from './cgroup-layout';
import {
  AdmissionError,
  admissionProblem,
  committedDiskMB,
  DEFAULT_ADMISSION,
  hostCapacity,
  reserveDiskMB,
  type AdmissionLimits,
  type Resources,
} from './admission';
import { ConsoleLogCap, DEFAULT_CONSOLE_LOG_BYTES } from './console-log';
import { containerNofile } from './host-limits';
import { DEFAULT_ID_MAPPING, shiftedLayer, type IdMapping } from './id-shift';
import {
  DEFAULT_DISK_MB,
  fileSystemMB,
  hasSandboxDisk,
  makeSandboxDisk,
  mountSandboxDisk,
  releaseDataDir,
  removeSandboxDisk,
  shareDataDir,
  unmountSandboxDisk,
} from './sandbox-disk';
import { releaseUserNamespace } from './userns';
import { poolOf } from './disk-pool';
import {
  cgroupsPathOf,
  checkInstanceName,
  checkSandboxID,
  instancePaths,
  sandboxConfigPath,
  sandboxPaths,
  STEPS_DATA_DIR,
  type InstancePaths,
} from './instance';
import { OciCli, STAGED_ROOTFS, stagedBinds, type OciState } from './oci-cli';
import { renderOciConfig } from './oci-config';
import { renderSeccomp } from './seccomp';
import { CompiledSeccomp } from './seccomp-bpf';
import { bindChrootProcs, chrootDirProblem } from './chroot-proc';
import { plainChrootMountPoints } from './chroot-mount-points';
import { attachImageTree, detachAll, makeAttachedDir, writeAttachedFiles } from './attach-image';
import { CHILD_OOM_SCORE_ADJ_ENV } from '../contract/child-oom';
import { AGENT_OOM_SCORE_ADJ, CHILD_OOM_SCORE_ADJ } from './oom';
import { hostSandboxResolvConf } from './network/host-resolvers';
import { renderHosts } from './sandbox-etc';
import { attachesAfterStart, joinsUsernsByPath, makesNetworkNamespace, type RunscPlatform } from './runsc';
import type { RuntimeChoice, RuntimeName, SandboxNetwork, SandboxRuntime, SandboxSpec, SandboxStatus, SandboxUsage } from './types';
import { readSandboxUsage } from './usage';
import { EndWatch, resetConnections, type EndListener } from './end-watch';
import { copyChanges } from './filesystem-changes';
import { findExecutable } from './which';
import { sleep } from '../util/poll';
import { CommittedConfigs } from './committed-configs';
import { timed, type StepTimes } from '../util/step-times';

export const DEFAULT_PIDS_LIMIT = 4096;
export const DEFAULT_NOFILE = 20_000;

export interface OciRuntimeOptions {
  /** Names everything this runtime creates (see instance.ts). */
  instance: string;
  runtime?: RuntimeChoice;
  /** With runtime runsc: its platform (runsc.ts); default systrap. */
  runscPlatform?: RunscPlatform;
  /** Path of the CLI; default: `crun` / `runc` / `runsc` from PATH. */
  binary?: string;
  /** Parent of the per-instance runtime state (--root); default /run/sandbox-kit/runtime. */
  stateRoot?: string;
  /** Parent of the per-instance sandbox dirs (upper dirs live here); default /var/lib/sandbox-kit/runtime. */
  dataRoot?: string;
  agent?: AgentPayload;
  agentPort?: number;
  pidsLimit?: number;
  nofile?: number;
  /** resolv.conf of the sandboxes; default: the host's, without loopback servers. */
  resolvConf?: string;
  /** Overcommit of the host's memory, CPUs and disk (admission.ts); each left out is DEFAULT_ADMISSION's. */
  admission?: Partial<AdmissionLimits>;
  /** The capacity admission compares with; default this host's memory and CPUs, and the data root's size. */
  capacity?: Resources;
  /**
   * Other directories whose disk images count against the data root (admission.ts) when they lie on its file
   * system: the volumes'. The sandboxes' and the build steps' are counted always.
   */
  diskDirs?: string[];
  /** Cap of each sandbox's console log (console-log.ts); default 1 MiB. */
  consoleLogBytes?: number;
  /** Default true: user namespace and seccomp profile. false only for the benchmark measuring their cost. */
  hardened?: boolean;
  /**
   * Default true: every sandbox gets a disk of its own (sandbox-disk.ts) of its spec's `diskMB`, else `diskMB`
   * here. false: its writes go to the data root's file system, bounded only by it.
   */
  disks?: boolean;
  /** The disk of a sandbox whose spec names none; default 1024 MB. */
  diskMB?: number;
  /** Host ids of the sandboxes' user namespaces (id-shift.ts); default 100000, 65536 of them. */
  idMapping?: IdMapping;
  /** When given, kill() also detaches the sandbox's network (idempotent). */
  network?: SandboxNetwork;
  /** Hears how long each step of a create takes (the hardening benchmark's breakdown). */
  times?: StepTimes;
}

function installed(name: string): string | undefined {
  return findExecutable(name);
}

/** Picks and checks the CLI; throws a clear error when it is missing. */
export function resolveRuntimeBinary(
  choice: RuntimeChoice,
  layout: CgroupLayoutInfo,
  binary?: string,
): { cli: ReturnType<typeof selectRuntime>; binary: string } {
  if (!['crun', 'runc', 'runsc', 'auto'].includes(choice)) {
    throw new Error(`invalid runtime ${JSON.stringify(choice)}: expected crun, runc, runsc or auto`);
  }
  const found = { crun: installed('crun'), runc: installed('runc'), runsc: choice === 'runsc' ? installed('runsc') : undefined };
  const selection = selectRuntime(choice, layout, { crun: found.crun !== undefined, runc: found.runc !== undefined });
  const path = binary ?? found[selection.name];
  if (path === undefined || findExecutable(path) === undefined) {
    const where = binary ?? `PATH (${process.env.PATH ?? ''})`;
    const others = { crun: 'runc', runc: 'crun', runsc: 'crun, runc' }[selection.name];
    throw new Error(
      `OCI runtime ${selection.name} not found at ${where}: install the Debian package ${selection.name}` +
        (selection.name === 'runsc' ? ' (scripts/setup-host.sh takes it from bookworm-backports on bookworm)' : '') +
        (choice === 'auto' ? ' (auto found neither crun nor runc)' : `, or choose ${others} or auto`),
    );
  }
  return { cli: selection, binary: path };
}

function mapState(s: OciState): SandboxStatus {
  const state = s.status === 'running' || s.status === 'paused' ? s.status : 'stopped';
  return { sandboxID: s.id, state, ...(s.pid !== undefined && state !== 'stopped' ? { pid: s.pid } : {}) };
}

function tail(file: string, bytes = 2000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-bytes).trim();
  } catch {
    return '';
  }
}

export class OciSandboxRuntime implements SandboxRuntime {
  readonly paths: InstancePaths;
  private readonly payload: AgentPayload;
  private readonly agentPort: number;
  private readonly pidsLimit: number;
  private readonly nofile: number;
  private readonly resolvConf: string;
  private readonly consoleLogs: ConsoleLogCap;
  /** Under runsc: sandboxes that end by themselves (an OOM ends gVisor's kernel, end-watch.ts). */
  private readonly ends = new EndWatch();
  private readonly admission: AdmissionLimits;
  private readonly configs = new CommittedConfigs();
  private readonly capacity: Resources;
  /** Requests admitted whose config.json (disk image) is not written yet. */
  private readonly pending: Resources = { memoryMB: 0, cpuCount: 0 };
  private inFlight = 0;
  /** crun: the seccomp profile as crun compiled it for the first hardened sandbox (seccomp-bpf.ts). */
  private readonly compiledSeccomp = new CompiledSeccomp();
  /** Read once: the hierarchies do not change while the platform runs. */
  private mounts: CgroupMount[] | undefined;

  constructor(
    readonly cli: OciCli,
    paths: InstancePaths,
    private readonly options: OciRuntimeOptions,
  ) {
    this.paths = paths;
    this.payload = options.agent ?? defaultAgentPayload();
    checkAgentPayload(this.payload);
    this.consoleLogs = new ConsoleLogCap(options.consoleLogBytes ?? DEFAULT_CONSOLE_LOG_BYTES);
    this.admission = { ...DEFAULT_ADMISSION, ...options.admission };
    this.capacity = options.capacity ?? hostCapacity();
    // Sandboxes of an earlier run of this instance keep their cap after a restart.
    for (const entry of fs.existsSync(paths.dataDir) ? fs.readdirSync(paths.dataDir) : []) {
      const log = sandboxPaths(paths, entry).log;
      if (fs.existsSync(log)) this.consoleLogs.watch(log);
    }
    this.agentPort = options.agentPort ?? DEFAULT_AGENT_PORT;
    this.pidsLimit = options.pidsLimit ?? DEFAULT_PIDS_LIMIT;
    this.nofile = containerNofile(options.nofile ?? DEFAULT_NOFILE);
    this.resolvConf = options.resolvConf ?? hostSandboxResolvConf();
  }

  get name(): RuntimeName {
    return this.cli.name;
  }

  /** Whether attachImage works here; where not (runsc), an image server's filesystem is a layer from the create on. */
  get attachesAfterStart(): boolean {
    return attachesAfterStart(this.name);
  }

  async create(spec: SandboxSpec): Promise<SandboxStatus> {
    const id = checkSandboxID(spec.sandboxID);
    const problems: string[] = [];
    if (spec.layers.length === 0) problems.push('layers: at least one (the base root filesystem) is needed');
    for (const layer of spec.layers) {
      if (!fs.statSync(layer, { throwIfNoEntry: false })?.isDirectory()) problems.push(`layer ${layer} is not a directory`);
    }
    // crun and runc make the network namespace with the container; the link is moved in by its pid (join-link.ts).
    const join = spec.network.pending && makesNetworkNamespace(this.name) ? spec.network.pending.join : undefined;
    if (!join && !spec.network.pending && !fs.statSync(spec.network.netnsPath, { throwIfNoEntry: false }))
      problems.push(`network namespace ${spec.network.netnsPath} does not exist`);
    if (problems.length > 0) throw new Error(`cannot create sandbox ${id}: ${problems.join('; ')}`);

    const p = sandboxPaths(this.paths, id);
    if (spec.restart) {
      if (!this.hasChanges(id)) throw new Error(`cannot restart sandbox ${id}: its filesystem changes are gone (${p.upper})`);
      if (await this.cli.state(id)) throw new Error(`cannot restart sandbox ${id}: it still has a container`);
    } else if (fs.existsSync(p.bundle) || hasSandboxDisk(p.bundle))
      throw new Error(`cannot create sandbox ${id}: it already exists (${p.bundle})`);
    const times = this.options.times;
    const hardened = this.options.hardened !== false;
    const mapping = this.options.idMapping ?? DEFAULT_ID_MAPPING;
    const disks = this.options.disks !== false;
    const diskMB = spec.diskMB ?? this.options.diskMB ?? DEFAULT_DISK_MB;
    // A restart mounts the disk it has (counted already); a new sandbox asks for its own.
    const request = { memoryMB: spec.memoryMB, cpuCount: spec.cpuCount, ...(disks ? { diskMB: spec.restart ? 0 : diskMB } : {}) };
    const host = disks ? { diskMB: fileSystemMB(this.paths.dataDir), ...this.capacity } : this.capacity;
    // Checked and held in one step, before anything awaits: a create, volume, build step or upload checked after
    // this one sees its request (the disk as the admission's reservation until its image is on the data root).
    const releaseDisk = await timed(times, 'admission', () => {
      const problem = admissionProblem(request, this.committed(id), host, this.admission);
      if (problem) throw new AdmissionError(`cannot create sandbox ${id}: ${problem}`);
      this.pending.memoryMB += request.memoryMB;
      this.pending.cpuCount += request.cpuCount;
      return request.diskMB ? reserveDiskMB(this.paths.dataDir, request.diskMB) : () => undefined;
    });
    this.inFlight++;
    let counted = true;
    try {
      if (!join && spec.network.pending) await spec.network.pending.prepare();
      const layers = hardened
        ? await timed(times, 'shifted layers', () => Promise.all(spec.layers.map((l) => shiftedLayer(l, mapping))))
        : spec.layers;
      fs.mkdirSync(this.paths.dataDir, { recursive: true, mode: 0o700 });
      if (spec.restart) {
        if (hasSandboxDisk(p.bundle)) await this.mountDisk(p.bundle);
        // The overlay's work dir and the mount point are scratch; only the upper dir carries the sandbox's files.
        for (const d of [p.work, p.pidFile]) fs.rmSync(d, { recursive: true, force: true });
      } else {
        fs.mkdirSync(p.bundle, { mode: 0o700 });
        if (disks)
          await timed(times, 'disk', async () => {
            await this.sharedDataDir();
            await makeSandboxDisk(p.bundle, diskMB, 0o700, poolOf(this.paths.dataDir));
            releaseDisk(); // its image counts at its size now
          });
        if (spec.changesFrom !== undefined) await copyChanges(spec.changesFrom, p.upper);
      }
      for (const d of [p.work, path.join(p.upper, 'etc')]) fs.mkdirSync(d, { recursive: true, mode: 0o755 });
      const hostname = spec.hostname ?? id;
      fs.writeFileSync(path.join(p.upper, 'etc', 'hostname'), `${hostname}\n`);
      fs.writeFileSync(path.join(p.upper, 'etc', 'hosts'), renderHosts(hostname, spec.network.address));
      fs.writeFileSync(path.join(p.upper, 'etc', 'resolv.conf'), this.resolvConf);
      if (hardened)
        for (const f of ['', 'etc', 'etc/hostname', 'etc/hosts', 'etc/resolv.conf'])
          fs.lchownSync(path.join(p.upper, f), mapping.base, mapping.base);
      const chrootDirs = spec.chrootDirs ?? [];
      plainChrootMountPoints(p.upper, layers, chrootDirs, hardened ? mapping.base : 0);
      // Not under runsc: nothing can be attached to a running gVisor sandbox (runsc.ts, attachesAfterStart).
      const attachDir = attachesAfterStart(this.name) ? spec.attachDir : undefined;
      const attachProblem = attachDir === undefined ? undefined : chrootDirProblem(attachDir);
      if (attachProblem) throw new Error(`cannot create sandbox ${id}: attach dir: ${attachProblem}`);
      const binds = [
        ...payloadBinds(this.payload),
        ...(spec.volumes ?? []).map((v) => ({ ...v, readonly: false })),
        ...(spec.readOnlyFiles ?? []).map((f) => ({ ...f, readonly: true })),
        ...(attachDir !== undefined ? [{ source: makeAttachedDir(p.bundle), target: attachDir, readonly: true }] : []),
      ];
      const staged = stagedBinds(binds.map((b) => b.source));
      const profile = hardened && this.name === 'crun' ? renderSeccomp() : undefined;
      const seccompBpf = profile && this.compiledSeccomp.of(profile);
      const config = renderOciConfig({
        rootfs: STAGED_ROOTFS,
        args: agentArgv(this.agentPort, [
          ...(spec.accessToken !== undefined ? ['--token-env', AGENT_TOKEN_ENV] : []),
          ...(spec.agentArgs ?? []),
        ]),
        env: {
          HOME: '/root',
          [CHILD_OOM_SCORE_ADJ_ENV]: String(CHILD_OOM_SCORE_ADJ),
          ...(spec.accessToken !== undefined ? { [AGENT_TOKEN_ENV]: spec.accessToken } : {}),
        },
        cwd: '/',
        uid: 0,
        gid: 0,
        hostname,
        ...(join ? { privateNetwork: true } : { netnsPath: spec.network.netnsPath }),
        memoryBytes: spec.memoryMB * 1024 * 1024,
        cpuCount: spec.cpuCount,
        pidsLimit: this.pidsLimit,
        cgroupsPath: cgroupsPathOf(this.paths, id),
        binds: binds.map((b, i) => ({ ...b, source: staged[i]!.target })),
        nofile: this.nofile,
        oomScoreAdj: AGENT_OOM_SCORE_ADJ,
        hardened,
        ...(seccompBpf !== undefined ? { seccompBpf } : {}),
        ...(chrootDirs.length > 0 ? { chrootDirs, ...(this.name === 'runsc' ? { gvisor: true } : {}) } : {}),
        ...(attachDir !== undefined ? { followHostMounts: true } : {}),
        ...(hardened
          ? { userns: { ...(spec.network.usernsPath && joinsUsernsByPath(this.name) ? { path: spec.network.usernsPath } : {}), mapping } }
          : {}),
      });
      fs.writeFileSync(p.config, JSON.stringify(config));
      this.configs.wrote(p.config, config);
      const overlay = { lower: layers, upper: p.upper, work: p.work, target: STAGED_ROOTFS };
      // With a join: the container made (its namespaces exist, its first process waits), then started while the link
      // is moved in by its pid (tini's from then on, which never changes namespaces: a sandbox's own processes cannot
      // move it elsewhere) and configured. The port's rules were in place before (the join waits for the port).
      const code = await timed(times, join ? 'runtime create' : 'runtime run --detach', () =>
        this.cli.runDetached(id, p.bundle, { overlay, binds: staged }, p.log, p.pidFile, { createOnly: join !== undefined }),
      );
      if (code !== 0) throw new Error(`${this.name} could not start sandbox ${id} (exit ${code}): ${tail(p.log) || 'no output'}`);
      if (join) {
        const created = Number(fs.readFileSync(p.pidFile, 'utf8').trim());
        await timed(times, 'network join', () => join(created, () => timed(times, 'runtime start', () => this.cli.start(id))));
      }
      this.consoleLogs.watch(p.log);
      if (profile && seccompBpf === undefined) this.compiledSeccomp.keep(profile, this.cli.stateDir, id);
      // The container holds its user namespace now (so does the network namespace): the name is no longer needed.
      // Dropped while the agent starts (nothing waits for it; the network's detach drops it too, idempotently).
      if (spec.network.usernsPath) void releaseUserNamespace(spec.network.usernsPath).catch(() => undefined);
      const pid = Number(fs.readFileSync(p.pidFile, 'utf8').trim());
      // Under runsc gVisor mounted each one's /proc itself (oci-config.ts).
      if (chrootDirs.length > 0 && this.name !== 'runsc') await bindChrootProcs(pid, chrootDirs);
      if (this.name === 'runsc' && pid > 0) this.ends.watch(id, pid, spec.network.address, cgroupsPathOf(this.paths, id));
      return { sandboxID: id, state: 'running', ...(pid > 0 ? { pid } : {}) };
    } catch (err) {
      this.inFlight--;
      counted = false;
      // A failed restart keeps the sandbox's files for another try (or its kill).
      await (spec.restart ? this.removeContainer(id) : this.removeTraces(id)).catch(() => undefined);
      throw err;
    } finally {
      if (counted) this.inFlight--;
      this.pending.memoryMB -= request.memoryMB;
      this.pending.cpuCount -= request.cpuCount;
      releaseDisk();
    }
  }

  /**
   * A sandbox of an earlier run of the platform that this run keeps (running or paused in memory), at the address
   * its network attachment has: under runsc its end is watched again (end-watch.ts); a sandbox already gone is
   * reported as ended. Nothing to do under crun and runc.
   */
  async adopt(sandboxID: string, address: string): Promise<void> {
    const id = checkSandboxID(sandboxID);
    if (this.name !== 'runsc') return;
    const pid = (await this.cli.state(id))?.pid ?? 0;
    this.ends.watch(id, pid, address, cgroupsPathOf(this.paths, id));
  }

  /** Called when a sandbox ends without a kill or stop (under runsc: out of memory, end-watch.ts). */
  onEnded(listener: EndListener): void {
    this.ends.onEnded(listener);
  }

  async stop(sandboxID: string): Promise<void> {
    const id = checkSandboxID(sandboxID);
    const address = this.ends.unwatch(id);
    await this.removeContainer(id);
    if (address !== undefined) await resetConnections(address);
    // What was attached after start goes with the container (a restart gets its filesystems as layers, if at all).
    await detachAll(sandboxPaths(this.paths, id).bundle, { remove: true });
    // Its files stay in the image; a stopped sandbox holds no loop device (a restart or a copy mounts it again).
    // Its config goes with the disk's mount: a stopped sandbox commits no memory or CPUs (committed).
    this.configs.forget(sandboxPaths(this.paths, id).config);
    await unmountSandboxDisk(sandboxPaths(this.paths, id).bundle);
  }

  hasChanges(sandboxID: string): boolean {
    const p = sandboxPaths(this.paths, checkSandboxID(sandboxID));
    // A disk not mounted (after the host restarted) holds the upper dir; the next use mounts it.
    return hasSandboxDisk(p.bundle) || fs.statSync(p.upper, { throwIfNoEntry: false })?.isDirectory() === true;
  }

  async copyChanges(sandboxID: string, target: string): Promise<void> {
    const id = checkSandboxID(sandboxID);
    const bundle = sandboxPaths(this.paths, id).bundle;
    if (hasSandboxDisk(bundle)) await this.mountDisk(bundle);
    const running = (await this.cli.state(id))?.status === 'running';
    if (running) await this.cli.pause(id);
    try {
      await copyChanges(sandboxPaths(this.paths, id).upper, target);
    } finally {
      if (running) await this.cli.resume(id);
    }
  }

  /** The data dir as a shared mount point (sandbox-disk.ts), before a disk is mounted below it. */
  private sharedDataDir(): Promise<void> {
    return shareDataDir(this.paths.dataDir);
  }

  private async mountDisk(bundle: string): Promise<void> {
    await this.sharedDataDir();
    await mountSandboxDisk(bundle);
  }

  /** Gives up the data dir's own mount when no sandbox of this instance has its disk mounted (its sandboxes are gone). */
  async releaseDataDir(): Promise<void> {
    await releaseDataDir(this.paths.dataDir);
  }

  /**
   * Removes the instance's parent cgroup when no container of it is left and no create is under way: at each
   * container's removal, and at a platform's close (a template build step's cgroup lies below it too, and the step
   * executor removes only its own).
   */
  releaseCgroupParent(): void {
    if (this.inFlight === 0 && this.containerCount() === 0) removeCgroup(this.paths.cgroupParent);
  }

  /**
   * What the sandboxes of this instance hold (their config.json; disk: every image on the data root, a restart's
   * included) plus the requests being created; `except` (a restart) not.
   */
  private committed(except: string): Resources {
    const sum = { ...this.pending };
    const dirs = [this.paths.dataDir, path.join(this.paths.dataDir, STEPS_DATA_DIR), ...(this.options.diskDirs ?? [])];
    sum.diskMB = committedDiskMB(this.paths.dataDir, dirs);
    // Sandboxes are the directories there (disk images and console logs lie beside them).
    const entries = fs.existsSync(this.paths.dataDir) ? fs.readdirSync(this.paths.dataDir, { withFileTypes: true }) : [];
    const sandboxes = entries.filter((e) => e.isDirectory() && e.name !== except);
    // The config's path alone, not sandboxPaths' six (a millisecond a create with 200 sandboxes).
    const configs = this.configs.sum(sandboxes.map((e) => sandboxConfigPath(this.paths, e.name)));
    sum.memoryMB += configs.memoryMB;
    sum.cpuCount += configs.cpuCount;
    return sum;
  }

  /**
   * Mounts an image's filesystem (its layers, topmost first) at `<attachDir>/<key>/rootfs` inside the running
   * sandbox, writable, with a /dev and /proc of its own (attach-image.ts). `attachDir` is the one it was created with.
   */
  async attachImage(sandboxID: string, o: { key: string; layers: string[]; attachDir: string }): Promise<void> {
    const id = checkSandboxID(sandboxID);
    if (!attachesAfterStart(this.name))
      throw new Error(
        `cannot attach ${o.key} to sandbox ${id}: under ${this.name} a filesystem is given at create, not after start (runsc.ts)`,
      );
    const state = await this.cli.state(id);
    const pid = state?.status === 'stopped' ? undefined : state?.pid;
    if (pid === undefined || !(pid > 0)) throw new Error(`sandbox ${id} is not running`);
    const mapping = this.options.idMapping ?? DEFAULT_ID_MAPPING;
    const hardened = this.options.hardened !== false;
    const layers = hardened ? await Promise.all(o.layers.map((l) => shiftedLayer(l, mapping))) : o.layers;
    await attachImageTree({ bundle: sandboxPaths(this.paths, id).bundle, key: o.key, layers, pid, attachDir: o.attachDir, mapping });
  }

  /** Writes (null: removes) files beside an attached filesystem, `<attachDir>/<key>/<name>` inside (read-only there). */
  setAttachedFiles(sandboxID: string, key: string, files: Record<string, string | null>): void {
    writeAttachedFiles(sandboxPaths(this.paths, checkSandboxID(sandboxID)).bundle, key, files);
  }

  pause(sandboxID: string): Promise<void> {
    return this.cli.pause(checkSandboxID(sandboxID)).then(() => undefined);
  }

  resume(sandboxID: string): Promise<void> {
    return this.cli.resume(checkSandboxID(sandboxID)).then(() => undefined);
  }

  async kill(sandboxID: string): Promise<void> {
    const id = checkSandboxID(sandboxID);
    const address = this.ends.unwatch(id);
    await this.removeTraces(id);
    // Under runsc: before its address can go to another sandbox (end-watch.ts).
    if (address !== undefined) await resetConnections(address);
    if (this.options.network) await this.options.network.detach(id);
  }

  /** The container (processes, runtime state) and its cgroups; the instance's parent cgroup when idle. */
  private async removeContainer(id: string): Promise<void> {
    await this.cli.remove(id);
    this.consoleLogs.unwatch(sandboxPaths(this.paths, id).log);
    const left = await removeCgroupPatiently(cgroupsPathOf(this.paths, id));
    this.releaseCgroupParent();
    if (left.length > 0) throw new Error(`sandbox ${id}: cgroups still in use after kill: ${left.join(', ')}`);
  }

  /** The container, its cgroups, its disk, its directory and its console log. */
  private async removeTraces(id: string): Promise<void> {
    const p = sandboxPaths(this.paths, id);
    this.configs.forget(p.config);
    try {
      await this.removeContainer(id);
    } finally {
      try {
        await detachAll(p.bundle, { remove: false });
        await removeSandboxDisk(p.bundle, poolOf(this.paths.dataDir));
      } finally {
        for (const f of [p.bundle, p.log]) fs.rmSync(f, { recursive: true, force: true });
      }
    }
  }

  /** Containers in this instance's runtime state (one directory each), without a CLI call. */
  private containerCount(): number {
    try {
      return fs.readdirSync(this.cli.stateDir, { withFileTypes: true }).filter((e) => e.isDirectory()).length;
    } catch {
      return 0;
    }
  }

  async status(sandboxID: string): Promise<SandboxStatus | undefined> {
    const s = await this.cli.state(checkSandboxID(sandboxID));
    return s && mapState(s);
  }

  async list(): Promise<SandboxStatus[]> {
    return (await this.cli.list()).map(mapState);
  }

  admissionProblem(request: Resources): string | undefined {
    return admissionProblem(request, this.committed(''), this.capacity, this.admission);
  }

  usage(sandboxID: string): SandboxUsage | undefined {
    const id = checkSandboxID(sandboxID);
    this.mounts ??= hostCgroupMounts();
    const p = sandboxPaths(this.paths, id);
    return readSandboxUsage(cgroupsPathOf(this.paths, id), p.upper, this.mounts, hasSandboxDisk(p.bundle));
  }
}

/** The kernel frees a killed cgroup's processes asynchronously: retry rmdir for a short while. */
async function removeCgroupPatiently(relative: string, timeoutMs = 3000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = removeCgroup(relative);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(20);
  }
}

/** Makes a runtime for `instance`: detects the cgroup layout, picks and checks the CLI and the agent payload. */
export function createOciRuntime(options: OciRuntimeOptions): OciSandboxRuntime {
  checkInstanceName(options.instance);
  const layout = classifyCgroupLayout(readCgroupFacts());
  const { cli, binary } = resolveRuntimeBinary(options.runtime ?? 'auto', layout, options.binary);
  const paths = instancePaths(options.instance, cli.name, { stateRoot: options.stateRoot, dataRoot: options.dataRoot });
  return new OciSandboxRuntime(new OciCli(cli, binary, paths.stateDir, options.runscPlatform), paths, options);
}
