/**
 * Template build steps as one-shot foreground containers: the layers so far below, the new (empty) layer directory
 * as the overlay's upper dir, in a user namespace. With network 'egress' the step gets a network namespace of its
 * own (owned by its user namespace) whose only way out is the platform's build egress proxy (build-egress.ts): the
 * Debian mirror and registries, never the host's loopback, private ranges or metadata. With 'none' it gets one with
 * only loopback (a template's start and ready check, which may listen anywhere or change firewall rules). The overlay is
 * mounted in the runtime call's private mount namespace, so nothing stays mounted afterwards. The container's stdout
 * and stderr are pipes: every process of the step dies with its PID namespace when the step's first process exits,
 * so the pipes always reach EOF.
 *
 * A step's disk: its upper and work dirs are on a disk of its own (sandbox-disk.ts: a sparse ext4 image, loop-mounted
 * beside the step's scratch), so a step writing past its size gets ENOSPC and the host keeps its space. After a
 * step that succeeded, the upper dir is copied into the layer directory (`cp -a`: owners, modes, xattrs such as
 * overlayfs' opaque marks, whiteout devices, hard links and holes kept), then the disk is unmounted and removed.
 *
 * What a layer is: the overlay upper dir after the step. Deleted files appear there as whiteouts (character
 * devices 0/0) and replaced directories as opaque directories (xattr trusted.overlay.opaque=y); both take effect
 * when the layer is used as a lower dir under later steps and sandboxes, so a layer stack reproduces deletions.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { classifyCgroupLayout, readCgroupFacts } from './cgroup-layout';
import { removeCgroup } from './cgroups';
import { containerNofile } from './host-limits';
import { checkInstanceName, instancePaths, STEPS_DATA_DIR, type InstancePaths } from './instance';
import { DEFAULT_ID_MAPPING, shiftedLayer, shiftTree, type IdMapping } from './id-shift';
import { lookupAccount } from './layer-accounts';
import { existsInLayers, insideTree } from './layer-view';
import { BUILD_PROXY_PORT, RELAY_SCRIPT, startBuildEgress, type BuildEgress } from './build-egress';
import { createRelayLink, relayNetnsName } from './build-relay-link';
import { createNamespacePair, removeUserNamespace } from './userns';
import { exec, execOk } from '../util/exec';
import { BoundedLines } from '../util/bounded-lines';
import { CHILD_OOM_SCORE_ADJ } from './oom';
import { DISK_MB_RANGE, diskImagePath, makeSandboxDisk, MIB, removeSandboxDisk, shareDataDir } from './sandbox-disk';
import type { DiskAdmission } from './admission';
import { allocatedBytes } from '../util/disk-usage';
import { poolOf } from './disk-pool';
import { timed, type StepTimes } from '../util/step-times';
import { OciCli, STAGED_ROOTFS, stagedBinds } from './oci-cli';
import { renderOciConfig, type BindMount } from './oci-config';
import { resolveRuntimeBinary, DEFAULT_NOFILE, DEFAULT_PIDS_LIMIT } from './oci-runtime';
import { joinsUsernsByPath, type RunscPlatform } from './runsc';
import type { RuntimeChoice, StepExecutor, StepRun } from './types';
import { inNetns, NETNS_DIR } from './network/in-netns';

export const TIMED_OUT_EXIT_CODE = 124;
/** A step's output line is kept up to this many bytes when the caller names no cap (StepRun.maxLineBytes). */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
/** The disk a build step gets when neither the step nor the executor names one (builds.stepDiskMB's default). */
export const DEFAULT_STEP_DISK_MB = 10_240;
/** The step executor's runtime state dir is the runtime's plus this suffix. */
export const STEPS_SUFFIX = '-steps';

export interface StepExecutorOptions {
  instance: string;
  runtime?: RuntimeChoice;
  /** With runtime runsc: its platform (runsc.ts). */
  runscPlatform?: RunscPlatform;
  binary?: string;
  stateRoot?: string;
  /** Scratch space (bundle, mount point); the overlay work dir always goes beside the layer dir. */
  dataRoot?: string;
  /** The platform's own proxy variables (build-proxy-env.ts): the build egress proxy goes on through that proxy. */
  proxyEnv?: Record<string, string>;
  /** Host ids of the steps' user namespace (id-shift.ts); the layers they make are owned by them. */
  idMapping?: IdMapping;
  /**
   * Default true: every step writes to a disk of its own of StepRun.diskMB, else `diskMB`, else DEFAULT_STEP_DISK_MB
   * (builds.stepDiskMB). false (a host without loop devices): its writes are bounded only by the data root.
   */
  disks?: boolean;
  diskMB?: number;
  /**
   * The data root's disk check (admission.ts): a step's disk gets at most the room left under it (at least the
   * smallest disk, else the step is refused), and the layer a step leaves is admitted before it is copied out.
   */
  admission?: DiskAdmission;
  /** Hears how long each part of a step takes (the hardening benchmark's breakdown). */
  times?: StepTimes;
}

/**
 * Whether the disk mounted on `dir` is (nearly) full for the step's unprivileged ids: under 1% of its blocks or of
 * its inodes left to them, or ENOSPC's message in the step's output (a step may remove what it wrote as it fails).
 */
function diskFull(dir: string, sawEnospc: boolean): boolean {
  if (sawEnospc) return true;
  const st = fs.statfsSync(dir);
  return st.bavail < st.blocks / 100 || st.ffree < st.files / 100;
}

/** strerror(ENOSPC), as a failing write prints it. */
const ENOSPC_TEXT = 'No space left on device';

/** The components of `target` (relative, top-down) missing from the merged view: mount points the runtime will make. */
function newPaths(layers: string[], upper: string, target: string): string[] {
  const parts = target.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return [target];
  const result: string[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join('/');
    if (!existsInLayers([upper, ...layers], rel)) result.push(rel);
  }
  return result;
}

/** Removes, deepest first, those mount points from the layer when they are still empty (an empty file or dir). */
function removeStubs(upper: string, rels: string[]): void {
  for (const rel of [...new Set(rels)].sort((x, y) => y.split('/').length - x.split('/').length)) {
    if (!insideTree(upper, rel)) continue; // a step may have made a directory above it a symlink: not ours to follow
    const p = path.join(upper, rel);
    try {
      const st = fs.lstatSync(p);
      if (st.isDirectory()) fs.rmdirSync(p);
      else if (st.isFile() && st.size === 0) fs.unlinkSync(p);
    } catch {
      // not empty, or not there
    }
  }
}

/** A step's network namespace (with its user namespace beside it): `skb-<instance>-<step id>`. */
export function stepNetnsName(instance: string, id: string): string {
  return `skb-${instance}-${id.replace(/^step-/, '')}`;
}

/** The proxy variables a step with egress gets: the relay at `host` (its loopback, or under runsc its link). */
export function stepProxyEnv(host = '127.0.0.1'): Record<string, string> {
  const url = `http://${host}:${BUILD_PROXY_PORT}`;
  return {
    http_proxy: url,
    https_proxy: url,
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    no_proxy: 'localhost,127.0.0.1',
    NO_PROXY: 'localhost,127.0.0.1',
  };
}

/** Starts the relay in the named network namespace on `host`; resolves once it listens, to a function stopping it. */
function startRelay(netns: string, socketPath: string, host: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const [program, ...args] = inNetns(netns, [process.execPath, '-e', RELAY_SCRIPT, socketPath, String(BUILD_PROXY_PORT), host]);
    const child = spawn(program!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the build egress relay exited (${code}): ${err.trim()}`)));
    child.stdout.once('data', () => resolve(() => child.kill('SIGKILL')));
  });
}

export class OciStepExecutor implements StepExecutor {
  private egress: Promise<BuildEgress> | undefined;

  constructor(
    private readonly cli: OciCli,
    private readonly paths: InstancePaths,
    private readonly proxyEnv: Record<string, string> = {},
    private readonly mapping: IdMapping = DEFAULT_ID_MAPPING,
    /** Where the steps' disks go and the shared directory above them (sandbox-disk.ts), or none; their admission. */
    private readonly disks: { diskMB: number; sharedDir: string; admission?: DiskAdmission } | undefined = undefined,
    private readonly times: StepTimes | undefined = undefined,
  ) {}

  /** The build egress proxy, started with the first step that needs it (one per executor). */
  private startEgress(): Promise<BuildEgress> {
    const upstream = this.proxyEnv.https_proxy ?? this.proxyEnv.HTTPS_PROXY ?? this.proxyEnv.http_proxy ?? this.proxyEnv.HTTP_PROXY;
    fs.mkdirSync(this.paths.stateDir, { recursive: true, mode: 0o700 });
    this.egress ??= startBuildEgress({ socketPath: path.join(this.paths.stateDir, 'egress.sock'), ...(upstream ? { upstream } : {}) });
    return this.egress;
  }

  async close(): Promise<void> {
    const egress = this.egress;
    this.egress = undefined;
    // Closing the server removes its socket file.
    await (await egress?.catch(() => undefined))?.close();
  }

  async run(step: StepRun): Promise<number> {
    const problems: string[] = [];
    for (const layer of step.layers)
      if (!fs.statSync(layer, { throwIfNoEntry: false })?.isDirectory()) problems.push(`layer ${layer} is not a directory`);
    if (step.layers.length === 0) problems.push('layers: at least the base root file system is needed');
    const layerStat = fs.statSync(step.layerDir, { throwIfNoEntry: false });
    if (!layerStat?.isDirectory()) problems.push(`layerDir ${step.layerDir} is not a directory`);
    else if (fs.readdirSync(step.layerDir).length > 0) problems.push(`layerDir ${step.layerDir} is not empty`);
    if (step.argv.length === 0) problems.push('argv is empty');
    if (step.network !== 'egress' && step.network !== 'none')
      problems.push(`network ${JSON.stringify(step.network)}: expected 'egress' or 'none'`);
    for (const b of step.binds ?? []) if (!fs.existsSync(b.source)) problems.push(`bind source ${b.source} does not exist`);
    const diskMB = step.diskMB ?? this.disks?.diskMB;
    if (diskMB !== undefined && (!Number.isInteger(diskMB) || diskMB < DISK_MB_RANGE.min || diskMB > DISK_MB_RANGE.max))
      problems.push(`diskMB ${diskMB}: expected an integer from ${DISK_MB_RANGE.min} to ${DISK_MB_RANGE.max}`);
    if (problems.length > 0) throw new Error(`cannot run build step: ${problems.join('; ')}`);
    const account = lookupAccount(step.layers, step.user);
    const times = this.times;
    const layers = await timed(times, 'shifted layers', () => Promise.all(step.layers.map((l) => shiftedLayer(l, this.mapping))));
    // The new layer's root is the step's "/" over the lower layers' one: root inside owns it.
    fs.lchownSync(step.layerDir, this.mapping.base, this.mapping.base);
    for (const b of step.binds ?? []) if (b.adopt) shiftTree(b.source, this.mapping);

    const id = `step-${randomBytes(6).toString('hex')}`;
    const withEgress = step.network === 'egress';
    const netns = withEgress ? stepNetnsName(this.paths.instance, id) : undefined;
    const scratch = path.join(this.paths.dataDir, id);
    // The step's disk (its upper and work dirs), or the layer dir itself with the work dir beside it.
    const disk = this.disks ? path.join(this.paths.dataDir, `disk-${id.replace(/^step-/, '')}`) : undefined;
    const upper = disk ? path.join(disk, 'upper') : path.resolve(step.layerDir);
    // The work dir must be on the upper dir's file system.
    const work = disk
      ? path.join(disk, 'work')
      : path.join(path.dirname(path.resolve(step.layerDir)), `.${path.basename(step.layerDir)}.work-${id}`);
    const binds: BindMount[] = [...(step.binds ?? []).map((b) => ({ source: path.resolve(b.source), target: b.target, readonly: true }))];
    const stubs = binds.flatMap((b) => newPaths(step.layers, step.layerDir, b.target));
    const cgroupsPath = `/${this.paths.cgroupParent}/${id}`;
    fs.mkdirSync(scratch, { recursive: true, mode: 0o700 });
    let stopRelay: (() => void) | undefined;
    let relayHost = '127.0.0.1';
    let sawEnospc = false;
    const admission = this.disks?.admission;
    let sizeMB = diskMB;
    try {
      const makeDisk = async () => {
        if (disk)
          await timed(times, 'disk: made and mounted', async () => {
            // Shared above, so the other runtime calls' copies of this mount go when the host unmounts it.
            await shareDataDir(this.disks!.sharedDir);
            // At most the room the data root has left: a step never writes more than is admitted.
            sizeMB = admission ? Math.min(diskMB!, Math.max(admission.roomMB(), DISK_MB_RANGE.min)) : diskMB;
            const release = admission?.reserve(sizeMB!, "this build step's disk");
            try {
              await makeSandboxDisk(disk, sizeMB!, 0o700, poolOf(this.disks!.sharedDir));
            } finally {
              release?.();
            }
            fs.mkdirSync(upper, { mode: 0o755 });
            fs.lchownSync(upper, this.mapping.base, this.mapping.base);
          });
        fs.mkdirSync(work, { mode: 0o700 });
      };
      const makeNetwork = async (): Promise<string | undefined> => {
        if (!netns) return undefined;
        const t0 = performance.now();
        const egress = await this.startEgress();
        const { usernsPath } = await createNamespacePair(netns, this.mapping);
        await execOk(inNetns(netns, ['ip', 'link', 'set', 'lo', 'up']));
        // Under runsc the step's loopback is gVisor's: the relay gets a namespace of its own, linked to the step's.
        if (this.cli.name === 'runsc') relayHost = await createRelayLink(netns);
        stopRelay = await startRelay(this.cli.name === 'runsc' ? relayNetnsName(netns) : netns, egress.socketPath, relayHost);
        times?.('namespaces and relay', performance.now() - t0);
        return usernsPath;
      };
      // Independent of each other: made side by side, both finished (or failed) before anything goes on.
      const [made, network] = await Promise.allSettled([makeDisk(), makeNetwork()]);
      if (made.status === 'rejected') throw made.reason;
      if (network.status === 'rejected') throw network.reason;
      const usernsPath = network.value;
      const staged = stagedBinds(binds.map((b) => b.source));
      const config = renderOciConfig({
        rootfs: STAGED_ROOTFS,
        args: step.argv,
        env: { HOME: account.home, ...(withEgress ? stepProxyEnv(relayHost) : {}), ...step.env },
        // A workdir that does not exist yet would be created by the runtime inside the layer: start in / then.
        cwd: step.workdir && newPaths(step.layers, step.layerDir, step.workdir).length === 0 ? step.workdir : '/',
        uid: account.uid,
        gid: account.gid,
        additionalGids: account.additionalGids,
        hostname: 'build',
        ...(netns ? { netnsPath: `${NETNS_DIR}/${netns}` } : { privateNetwork: true }),
        memoryBytes: step.memoryMB * 1024 * 1024,
        cpuCount: step.cpuCount,
        pidsLimit: DEFAULT_PIDS_LIMIT,
        cgroupsPath,
        binds: binds.map((b, i) => ({ ...b, source: staged[i]!.target })),
        nofile: containerNofile(DEFAULT_NOFILE),
        oomScoreAdj: CHILD_OOM_SCORE_ADJ,
        // A step with egress must not change the filtering of the namespace it is given; the start check's own
        // loopback-only namespace is the template's to configure (the transparent proxy's iptables).
        role: withEgress ? 'build' : 'sandbox',
        userns: { ...(usernsPath && joinsUsernsByPath(this.cli.name) ? { path: usernsPath } : {}), mapping: this.mapping },
      });
      fs.writeFileSync(path.join(scratch, 'config.json'), JSON.stringify(config));
      fs.mkdirSync(this.paths.stateDir, { recursive: true, mode: 0o700 });
      const argv = this.cli.stagedArgv(scratch, { overlay: { lower: layers, upper, work, target: STAGED_ROOTFS }, binds: staged }, [
        'run',
        '--bundle',
        scratch,
        id,
      ]);
      const tRun = performance.now();
      const code = await new Promise<number>((resolve, reject) => {
        const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          step.onLine('stderr', `step timed out after ${step.timeoutMs / 1000} s; killed`);
          void this.cli.kill(id).catch(() => child.kill('SIGKILL'));
        }, step.timeoutMs);
        let open = 2;
        let exitCode: number | undefined;
        const finish = () => {
          if (open === 0 && exitCode !== undefined) {
            clearTimeout(timer);
            resolve(timedOut ? TIMED_OUT_EXIT_CODE : exitCode);
          }
        };
        for (const [name, stream] of [
          ['stdout', child.stdout],
          ['stderr', child.stderr],
        ] as const) {
          const lines = new BoundedLines(step.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, (line, cut) => {
            if (line.includes(ENOSPC_TEXT)) sawEnospc = true;
            step.onLine(name, line, cut);
          });
          stream.on('data', (chunk: Buffer) => lines.push(chunk));
          stream.on('close', () => {
            lines.end();
            open--;
            finish();
          });
        }
        child.on('error', (err) => {
          clearTimeout(timer);
          reject(new Error(`cannot run build step: ${err.message}`));
        });
        child.on('exit', (code, signal) => {
          exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
          finish();
        });
      });
      times?.('runtime run', performance.now() - tRun);
      if (disk && code !== 0 && code !== TIMED_OUT_EXIT_CODE && diskFull(disk, sawEnospc)) step.onDiskFull?.(sizeMB!, sizeMB! < diskMB!);
      if (disk && code === 0) {
        removeStubs(upper, stubs);
        // The layer is admitted before it lands on the data root; the step's disk, which goes after, counts as written.
        const layerMB = admission ? Math.ceil((await allocatedBytes(upper)) / MIB) : 0;
        const release = admission?.reserve(layerMB, "this build step's layer", [diskImagePath(disk)]);
        try {
          await timed(times, 'disk: copied into the layer', () =>
            execOk(['cp', '-a', '--', `${upper}/.`, path.resolve(step.layerDir)], { timeoutMs: step.timeoutMs }),
          );
        } finally {
          release?.();
        }
      }
      return code;
    } finally {
      const tEnd = performance.now();
      await this.cli.remove(id).catch(() => undefined);
      stopRelay?.();
      if (netns) {
        if (this.cli.name === 'runsc') await exec(['ip', 'netns', 'del', relayNetnsName(netns)]);
        await exec(['ip', 'netns', 'del', netns]);
        await removeUserNamespace(netns);
      }
      removeCgroup(cgroupsPath);
      fs.rmSync(scratch, { recursive: true, force: true });
      times?.('container and namespaces removed', performance.now() - tEnd);
      if (disk)
        await timed(times, 'disk: unmounted and removed', async () => {
          await removeSandboxDisk(disk, poolOf(this.disks!.sharedDir));
          fs.rmSync(disk, { recursive: true, force: true });
        });
      else fs.rmSync(work, { recursive: true, force: true });
      removeStubs(path.resolve(step.layerDir), stubs);
    }
  }
}

export function createStepExecutor(options: StepExecutorOptions): OciStepExecutor {
  checkInstanceName(options.instance);
  const layout = classifyCgroupLayout(readCgroupFacts());
  const { cli, binary } = resolveRuntimeBinary(options.runtime ?? 'auto', layout, options.binary);
  const paths = instancePaths(options.instance, cli.name, { stateRoot: options.stateRoot, dataRoot: options.dataRoot });
  // Own state dir and scratch: build steps never show up in the sandbox runtime's list().
  const stepPaths = { ...paths, stateDir: `${paths.stateDir}${STEPS_SUFFIX}`, dataDir: path.join(paths.dataDir, STEPS_DATA_DIR) };
  return new OciStepExecutor(
    new OciCli(cli, binary, stepPaths.stateDir, options.runscPlatform),
    stepPaths,
    options.proxyEnv,
    options.idMapping,
    options.disks === false
      ? undefined
      : {
          diskMB: options.diskMB ?? DEFAULT_STEP_DISK_MB,
          sharedDir: paths.dataDir,
          ...(options.admission ? { admission: options.admission } : {}),
        },
    options.times,
  );
}
