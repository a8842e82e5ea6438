/**
 * Removes everything one runtime instance left behind after a crash: containers in its runtime state (crun's and
 * runc's), processes still in its cgroups, the cgroups themselves, mounts under its data dir, its directories (the
 * sandboxes' files too, unless keepFiles), and the network namespaces of its network. Touches nothing of another instance.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { classifyCgroupLayout, parseMountinfo, readCgroupFacts, selectRuntime } from './cgroup-layout';
import { cgroupPids, removeCgroup, thawCgroup } from './cgroups';
import { exec } from '../util/exec';
import { DEFAULT_STATE_ROOT, instancePaths, STEPS_DATA_DIR } from './instance';
import { OciCli } from './oci-cli';
import type { SandboxNetwork } from './types';
import { NETNS_DIR } from './network/in-netns';
import { STEPS_SUFFIX, stepNetnsName } from './step-executor';
import { removeUserNamespace } from './userns';
import { findExecutable } from './which';
import { sleep } from '../util/poll';
import { signalProcess } from '../util/signal';

export interface CleanupOptions {
  instance: string;
  stateRoot?: string;
  dataRoot?: string;
  /** The instance's network: every attachment it lists is detached. */
  network?: SandboxNetwork;
  /**
   * Keep the sandboxes' files (the data dir, unmounted): a platform started again on the same state finds its
   * paused sandboxes there and resumes them from their files; it removes the rest, as their records say.
   */
  keepFiles?: boolean;
  progress?: (line: string) => void;
}

export interface CleanupReport {
  containers: string[];
  cgroups: string[];
  mounts: string[];
  networks: string[];
  dirs: string[];
}

export async function cleanupLeftovers(options: CleanupOptions): Promise<CleanupReport> {
  const say = options.progress ?? (() => undefined);
  const report: CleanupReport = { containers: [], cgroups: [], mounts: [], networks: [], dirs: [] };
  const layout = classifyCgroupLayout(readCgroupFacts());

  for (const [name, suffix] of [
    ['crun', ''],
    ['runc', ''],
    ['runsc', ''],
    ['crun', STEPS_SUFFIX],
    ['runc', STEPS_SUFFIX],
    ['runsc', STEPS_SUFFIX],
  ] as const) {
    const stateDir = `${instancePaths(options.instance, name, options).stateDir}${suffix}`;
    const binary = findExecutable(name);
    if (!binary || !fs.existsSync(stateDir)) continue;
    const cli = new OciCli(selectRuntime(name, layout, { crun: true, runc: true }), binary, stateDir);
    for (const c of await cli.list().catch(() => [])) {
      await cli.remove(c.id).catch((err: Error) => say(`cleanup: ${err.message}`));
      report.containers.push(`${name}:${c.id}`);
      say(`cleanup: removed container ${c.id} (${name})`);
    }
  }

  // Processes a lost runtime state no longer knows: thaw, kill, wait until the cgroups are empty.
  const paths = instancePaths(options.instance, 'crun', options);
  const pids = cgroupPids(paths.cgroupParent);
  if (pids.length > 0) {
    thawCgroup(paths.cgroupParent);
    for (const pid of pids) signalProcess(pid, 'SIGKILL');
    say(`cleanup: killed ${pids.length} leftover process(es)`);
    for (let i = 0; i < 100 && cgroupPids(paths.cgroupParent).length > 0; i++) await sleep(20);
  }
  const left = removeCgroup(paths.cgroupParent);
  report.cgroups.push(paths.cgroupParent);
  if (left.length > 0) say(`cleanup: cgroups still busy: ${left.join(', ')}`);

  const dataDir = paths.dataDir;
  for (const m of await unmountBelow(dataDir)) {
    report.mounts.push(m);
    say(`cleanup: unmounted ${m}`);
  }

  // Build steps' network namespaces (with the egress relay in each) and their user namespaces.
  const stepPrefix = stepNetnsName(options.instance, '');
  for (const ns of fs.existsSync(NETNS_DIR) ? fs.readdirSync(NETNS_DIR).filter((n) => n.startsWith(stepPrefix)) : []) {
    const nsPids = (await exec(['ip', 'netns', 'pids', ns])).stdout.split('\n').filter(Boolean);
    for (const pid of nsPids) signalProcess(Number(pid), 'SIGKILL');
    await exec(['ip', 'netns', 'del', ns]);
    await removeUserNamespace(ns);
    report.networks.push(ns);
    say(`cleanup: removed build step namespace ${ns}`);
  }

  if (options.network) {
    for (const id of (await options.network.list()).keys()) {
      await options.network.detach(id);
      report.networks.push(id);
      say(`cleanup: detached network of ${id}`);
    }
  }

  const dirs = [path.join(options.stateRoot ?? DEFAULT_STATE_ROOT, options.instance)];
  // Build steps' scratch and disks are never kept: a step does not survive its platform.
  dirs.unshift(options.keepFiles ? path.join(dataDir, STEPS_DATA_DIR) : dataDir);
  for (const dir of dirs) {
    if (fs.existsSync(dir)) {
      fs.rmSync(dir, { recursive: true, force: true });
      report.dirs.push(dir);
      say(`cleanup: removed ${dir}`);
    }
  }
  return report;
}

/** Unmounts (lazily) `dir` and every mount below it, innermost first; the mount points it unmounted. */
export async function unmountBelow(dir: string): Promise<string[]> {
  const mounts = parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'))
    .map((m) => m.mountPoint)
    .filter((p) => p === dir || p.startsWith(`${dir}/`))
    .reverse();
  for (const m of mounts) await exec(['umount', '-l', m]);
  return mounts;
}
