/** The lab's state file: what `lab down` and `lab status` in another process need to find and stop everything. */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ClientMode, StackConfig } from '../config';
import type { AddressPlan } from './address-plan';
import type { EgressCheck } from './egress-check';
import type { ElasticIpMapping } from './eip-nat';
import { labDir } from './names';

export interface LabProcess {
  role: string;
  node: string;
  pid: number;
  /** Its start time (util/process-start.ts): the pid alone may name another process by the time the lab goes. */
  startTime: string;
  log: string;
}

/** Bumped when the state's shape changes: an older file is then ignored and teardown works from namespace names. */
export const STATE_VERSION = 3;

export interface LabState {
  version: typeof STATE_VERSION;
  name: string;
  mode: ClientMode;
  createdAt: string;
  dir: string;
  /** The stack config the lab was started with (ports, modes): everything later asks the lab, not the defaults. */
  config: StackConfig;
  /** Node name -> namespace name. */
  namespaces: Record<string, string>;
  sandboxes: string[];
  plan: AddressPlan;
  eips: { ingress: ElasticIpMapping; egress: ElasticIpMapping };
  processes: LabProcess[];
  passwordFile: string;
  ssh: { clientKey: string; user: string; port: number };
  /** Node -> directory laid over that node's /etc. */
  etcLayers: Record<string, string>;
  /** Node -> directory for pid files of the proxy client in that sandbox (SANDBOX_KIT_RUN_DIR). */
  runDirs: Record<string, string>;
  supervisorStatusFile: string;
  hostLink?: { device: string; route: string; via: string };
  /** Sysctls applied in the proxy namespace, and the ones that could not be (with why). */
  sysctls: { applied: Record<string, string>; notApplied: Record<string, string> };
  /** The egress check `labUp` ran last. */
  egressCheck?: EgressCheck;
}

export function stateFile(lab: string, base?: string): string {
  return `${labDir(lab, base)}/state.json`;
}

export function writeState(state: LabState): void {
  mkdirSync(state.dir, { recursive: true, mode: 0o700 });
  const path = `${state.dir}/state.json`;
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

export function readState(lab: string, base?: string): LabState | undefined {
  const path = stateFile(lab, base);
  if (!existsSync(path)) return undefined;
  try {
    const state = JSON.parse(readFileSync(path, 'utf8')) as LabState;
    return state.version === STATE_VERSION ? state : undefined;
  } catch {
    // A run killed while writing leaves a partial file; teardown then works from namespace names alone.
    return undefined;
  }
}
