/**
 * Template build steps as one-shot foreground containers: the layers so far below, the new (empty) layer directory
 * as the overlay's upper dir, the host network and the host's /etc/resolv.conf (builds need the Debian mirror; the
 * platform's proxy variables go along, see build-proxy-env.ts).
 * With network 'none' the step gets a network namespace of its own with only loopback (a template's start and ready
 * check, which may listen anywhere or change firewall rules). The overlay is mounted in the runtime call's private mount namespace, so nothing stays mounted afterwards. The
 * container's stdout and stderr are pipes: every process of the step dies with its PID namespace when the step's
 * first process exits, so the pipes always reach EOF.
 *
 * What a layer is: the overlay upper dir after the step. Deleted files appear there as whiteouts (character
 * devices 0/0) and replaced directories as opaque directories (xattr trusted.overlay.opaque=y); both take effect
 * when the layer is used as a lower dir under later steps and sandboxes, so a layer stack reproduces deletions.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { classifyCgroupLayout, readCgroupFacts } from './cgroup-layout';
import { removeCgroup } from './cgroups';
import { containerNofile } from './host-limits';
import { checkInstanceName, instancePaths, type InstancePaths } from './instance';
import { lookupAccount } from './layer-accounts';
import { CHILD_OOM_SCORE_ADJ } from './oom';
import { inPrivateMountNamespace, OciCli } from './oci-cli';
import { renderOciConfig, type BindMount } from './oci-config';
import { resolveRuntimeBinary, DEFAULT_NOFILE, DEFAULT_PIDS_LIMIT } from './oci-runtime';
import type { RuntimeChoice, StepExecutor, StepRun } from './types';

export const TIMED_OUT_EXIT_CODE = 124;
/** The step executor's runtime state dir is the runtime's plus this suffix. */
export const STEPS_SUFFIX = '-steps';

export interface StepExecutorOptions {
  instance: string;
  runtime?: RuntimeChoice;
  binary?: string;
  stateRoot?: string;
  /** Scratch space (bundle, mount point); the overlay work dir always goes beside the layer dir. */
  dataRoot?: string;
  /** Proxy variables for steps on the host network (build-proxy-env.ts); a step's own ENV wins. */
  proxyEnv?: Record<string, string>;
}

/** The components of `target` (relative, top-down) missing from the merged view: mount points the runtime will make. */
function newPaths(layers: string[], upper: string, target: string): string[] {
  const parts = target.split('/').filter(Boolean);
  const result: string[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join('/');
    if (![upper, ...layers].some((l) => fs.existsSync(path.join(l, rel)))) result.push(rel);
  }
  return result;
}

/** Removes, deepest first, those mount points from the layer when they are still empty (an empty file or dir). */
function removeStubs(upper: string, rels: string[]): void {
  for (const rel of [...new Set(rels)].sort((x, y) => y.split('/').length - x.split('/').length)) {
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

export class OciStepExecutor implements StepExecutor {
  constructor(
    private readonly cli: OciCli,
    private readonly paths: InstancePaths,
    private readonly proxyEnv: Record<string, string> = {},
  ) {}

  async run(step: StepRun): Promise<number> {
    const problems: string[] = [];
    for (const layer of step.layers)
      if (!fs.statSync(layer, { throwIfNoEntry: false })?.isDirectory()) problems.push(`layer ${layer} is not a directory`);
    if (step.layers.length === 0) problems.push('layers: at least the base root file system is needed');
    const layerStat = fs.statSync(step.layerDir, { throwIfNoEntry: false });
    if (!layerStat?.isDirectory()) problems.push(`layerDir ${step.layerDir} is not a directory`);
    else if (fs.readdirSync(step.layerDir).length > 0) problems.push(`layerDir ${step.layerDir} is not empty`);
    if (step.argv.length === 0) problems.push('argv is empty');
    if (step.network !== 'host' && step.network !== 'none')
      problems.push(`network ${JSON.stringify(step.network)}: expected 'host' or 'none'`);
    for (const b of step.binds ?? []) if (!fs.existsSync(b.source)) problems.push(`bind source ${b.source} does not exist`);
    if (problems.length > 0) throw new Error(`cannot run build step: ${problems.join('; ')}`);
    const account = lookupAccount(step.layers, step.user);

    const id = `step-${randomBytes(6).toString('hex')}`;
    const scratch = path.join(this.paths.dataDir, id);
    const rootfs = path.join(scratch, 'rootfs');
    // The work dir must be on the upper dir's file system.
    const work = path.join(path.dirname(path.resolve(step.layerDir)), `.${path.basename(step.layerDir)}.work-${id}`);
    const binds: BindMount[] = [
      ...(step.network === 'host' ? [{ source: '/etc/resolv.conf', target: '/etc/resolv.conf', readonly: true }] : []),
      ...(step.binds ?? []).map((b) => ({ source: path.resolve(b.source), target: b.target, readonly: true })),
    ];
    const stubs = binds.flatMap((b) => newPaths(step.layers, step.layerDir, b.target));
    const cgroupsPath = `/${this.paths.cgroupParent}/${id}`;
    fs.mkdirSync(rootfs, { recursive: true, mode: 0o700 });
    fs.mkdirSync(work, { mode: 0o700 });
    try {
      const config = renderOciConfig({
        rootfs,
        args: step.argv,
        env: { HOME: account.home, ...(step.network === 'host' ? this.proxyEnv : {}), ...step.env },
        // A workdir that does not exist yet would be created by the runtime inside the layer: start in / then.
        cwd: step.workdir && newPaths(step.layers, step.layerDir, step.workdir).length === 0 ? step.workdir : '/',
        uid: account.uid,
        gid: account.gid,
        additionalGids: account.additionalGids,
        hostname: 'build',
        privateNetwork: step.network === 'none',
        memoryBytes: step.memoryMB * 1024 * 1024,
        cpuCount: step.cpuCount,
        pidsLimit: DEFAULT_PIDS_LIMIT,
        cgroupsPath,
        binds,
        nofile: containerNofile(DEFAULT_NOFILE),
        oomScoreAdj: CHILD_OOM_SCORE_ADJ,
        // A step with egress must not change the filtering of the namespace it is given; the start check's own
        // loopback-only namespace is the template's to configure (the transparent proxy's iptables).
        role: step.network === 'none' ? 'sandbox' : 'build',
      });
      fs.writeFileSync(path.join(scratch, 'config.json'), JSON.stringify(config));
      fs.mkdirSync(this.paths.stateDir, { recursive: true, mode: 0o700 });
      const argv = inPrivateMountNamespace(
        {
          overlay: { lower: step.layers, upper: path.resolve(step.layerDir), work, target: rootfs },
          hideUnified: this.cli.selection.hideUnified,
        },
        this.cli.argv(['run', '--bundle', scratch, id]),
      );
      return await new Promise<number>((resolve, reject) => {
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
          createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => step.onLine(name, line));
          stream.on('close', () => {
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
    } finally {
      await this.cli.remove(id).catch(() => undefined);
      removeCgroup(cgroupsPath);
      fs.rmSync(scratch, { recursive: true, force: true });
      fs.rmSync(work, { recursive: true, force: true });
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
  const stepPaths = { ...paths, stateDir: `${paths.stateDir}${STEPS_SUFFIX}`, dataDir: path.join(paths.dataDir, `.steps`) };
  return new OciStepExecutor(new OciCli(cli, binary, stepPaths.stateDir), stepPaths, options.proxyEnv);
}
