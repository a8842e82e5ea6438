/**
 * Everything a runtime instance creates on the system carries its instance name, so two instances (two platforms,
 * parallel test runs) never touch each other's containers, cgroups, directories or namespaces.
 */
import * as path from 'node:path';
import { SANDBOX_ID_PATTERN } from '../contract/sandbox-id';
import type { RuntimeName } from './types';

const INSTANCE = /^[a-z][a-z0-9]{0,11}$/;

export function checkInstanceName(name: string): string {
  if (!INSTANCE.test(name)) {
    throw new Error(
      `invalid runtime instance name ${JSON.stringify(name)}: expected 1 to 12 lower-case letters or digits, starting with a letter`,
    );
  }
  return name;
}

export function checkSandboxID(id: string): string {
  if (!SANDBOX_ID_PATTERN.test(id)) {
    throw new Error(
      `invalid sandbox ID ${JSON.stringify(id)}: expected letters, digits, '_' and '-', starting with a letter or digit, at most 63 characters`,
    );
  }
  return id;
}

/** Default roots: runtime state is volatile (/run); upper dirs are on disk. */
export const DEFAULT_STATE_ROOT = '/run/sandbox-kit/runtime';
export const DEFAULT_DATA_ROOT = '/var/lib/sandbox-kit/runtime';
/** The build steps' scratch (bundles, disks): this directory in an instance's data dir (step-executor.ts). */
export const STEPS_DATA_DIR = '.steps';

export interface InstancePaths {
  instance: string;
  /** The OCI runtime's --root. */
  stateDir: string;
  /** One directory per sandbox (config.json, upper, work; its disk is mounted there) and its console log beside it. */
  dataDir: string;
  /** Parent cgroup of every sandbox of this instance, relative to each hierarchy's root. */
  cgroupParent: string;
}

export function instancePaths(
  instance: string,
  runtimeName: RuntimeName,
  roots: { stateRoot?: string; dataRoot?: string } = {},
): InstancePaths {
  checkInstanceName(instance);
  return {
    instance,
    stateDir: path.join(roots.stateRoot ?? DEFAULT_STATE_ROOT, instance, runtimeName),
    dataDir: path.join(roots.dataRoot ?? DEFAULT_DATA_ROOT, instance),
    cgroupParent: `sandbox-kit-${instance}`,
  };
}

export interface SandboxPaths {
  bundle: string;
  config: string;
  upper: string;
  work: string;
  log: string;
  pidFile: string;
}

/** A sandbox's OCI config (on its disk): sandboxPaths' `config` alone, for admission's sum over every sandbox. */
export function sandboxConfigPath(p: InstancePaths, id: string): string {
  return path.join(p.dataDir, id, 'config.json');
}

export function sandboxPaths(p: InstancePaths, id: string): SandboxPaths {
  const bundle = path.join(p.dataDir, id);
  return {
    bundle,
    config: sandboxConfigPath(p, id),
    upper: path.join(bundle, 'upper'),
    work: path.join(bundle, 'work'),
    // Beside the sandbox's disk, not on it: a sandbox that filled its disk still has its output kept (and capped).
    log: `${bundle}.console.log`,
    pidFile: path.join(bundle, 'pid'),
  };
}

export function cgroupsPathOf(p: InstancePaths, id: string): string {
  return `/${p.cgroupParent}/${id}`;
}
