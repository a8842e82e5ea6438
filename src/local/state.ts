/**
 * The local system's state file: what `status`, `rotate` and `down` in another terminal need to find everything `up`
 * started outside the lab's namespaces (the gateway), the sandboxes and their tokens, and how long each step took.
 * Root-only (0600 in a 0700 directory): it names the files holding tokens.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientMode, StackConfig } from '../config';

export const LOCAL_DIR = '/run/sandbox-kit/local';
/**
 * What outlives `down`: the platform's state (its Redis with the template index, the layer cache, the API key), so
 * a later `up` finds every template step cached. On disk, not in /run: the templates' layers are large.
 */
export const KEPT_DIR = '/var/lib/sandbox-kit/local';
export const DEFAULT_LOCAL_NAME = 'local';
const VERSION = 1;

export interface LocalProcess {
  role: string;
  pid: number;
  log: string;
  /** A word of the process's command line, checked before signalling it (a recycled pid is never killed). */
  marker: string;
}

export interface LocalSandbox {
  sandboxID: string;
  /** The lab node it runs in (sb1, sb2, ...). */
  node: string;
  address: string;
  agentPort: number;
}

export interface LocalState {
  version: typeof VERSION;
  /** The system's name; its lab has the same name (namespaces sk-<name>-*). */
  name: string;
  createdAt: string;
  dir: string;
  mode: ClientMode;
  config: StackConfig;
  /** Processes in the root namespace (the lab's own are the lab's to stop). */
  processes: LocalProcess[];
  gateway?: { url: string; port: number };
  /** The platform API, when the sandboxes come from it; its key file is 0600. */
  platform?: { url: string; apiKeyFile: string; stateDir: string };
  template?: { alias: string; templateID: string };
  sandboxes: LocalSandbox[];
  /** 0600, the gateway's file-catalog format: every sandbox with its access token. */
  catalogFile: string;
  /** Seconds per step of the `up` that built it. */
  timings: Record<string, number>;
  /** Set once `up` finished and its checks passed. */
  readyAt?: string;
}

export function localDir(name: string, base = LOCAL_DIR): string {
  return join(base, name);
}

/** The platform's state directory of the local system `name` (kept across `down`). */
export function platformStateDir(name: string, keptBase = KEPT_DIR): string {
  return join(keptBase, name, 'platform');
}

/** Where the service writes the states of the background template builds (template-builds.ts). */
export function templateBuildsFile(state: Pick<LocalState, 'dir'>): string {
  return join(state.dir, 'templates.json');
}

export function newLocalState(name: string, mode: ClientMode, config: StackConfig, base?: string): LocalState {
  const dir = localDir(name, base);
  return {
    version: VERSION,
    name,
    createdAt: new Date().toISOString(),
    dir,
    mode,
    config,
    processes: [],
    sandboxes: [],
    catalogFile: join(dir, 'sandboxes.json'),
    timings: {},
  };
}

export function writeLocalState(state: LocalState): void {
  mkdirSync(state.dir, { recursive: true, mode: 0o700 });
  const path = join(state.dir, 'state.json');
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

export function readLocalState(name: string, base?: string): LocalState | undefined {
  const path = join(localDir(name, base), 'state.json');
  if (!existsSync(path)) return undefined;
  try {
    const state = JSON.parse(readFileSync(path, 'utf8')) as LocalState;
    return state.version === VERSION ? state : undefined;
  } catch {
    return undefined; // a run killed while writing; `down` then works from names alone
  }
}

export function removeLocalDir(name: string, base?: string): boolean {
  const dir = localDir(name, base);
  if (!existsSync(dir)) return false;
  rmSync(dir, { recursive: true, force: true });
  return true;
}

/**
 * Writes the 0600 tokens file for the state's sandboxes, in the gateway's file-catalog format (one entry per sandbox,
 * with its plain access token, which the gateway hashes when it loads the file).
 */
export function writeSandboxTokens(state: LocalState, tokens: ReadonlyMap<string, string>): void {
  const entries = state.sandboxes.map((s) => ({
    sandboxID: s.sandboxID,
    host: s.address,
    agentPort: s.agentPort,
    token: tokens.get(s.sandboxID)!,
    state: 'running',
  }));
  writeFileSync(state.catalogFile, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
}

/** sandboxID -> access token, from the tokens file. */
export function readSandboxTokens(state: LocalState): Map<string, string> {
  const entries = JSON.parse(readFileSync(state.catalogFile, 'utf8')) as { sandboxID: string; token: string }[];
  return new Map(entries.map((e) => [e.sandboxID, e.token]));
}
