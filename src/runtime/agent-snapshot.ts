/**
 * The agent's V8 startup snapshot: `agent.snapshot` beside the bundle, made by the bundle step (scripts/bundle.ts) with
 * `node <the agent's V8 flags> --build-snapshot run.js` (scripts/bundle-loader.js), and the runtime starts the agent
 * as `node <flags> --snapshot-blob agent.snapshot run.js agent ...` (agentArgv).
 *
 * Why: node carries a code cache of its own built-in modules, made under V8's default flags. The agent runs under heap
 * flags of its own (agentNodeFlags), and V8 takes a code cache only under the flags it was made with, so node compiled
 * every built-in module the agent loads again at every start: about 25 ms of each create. A snapshot holds that cache
 * made under the flags it was built with. The snapshot is empty of the agent (node 20 does not snapshot `node:http`):
 * its main function is the loader's start of the bundle (run.js named on the command line), or runs any other script
 * named there as node would.
 *
 * What it costs: node keeps the blob (about 4 MiB) in the agent's memory for the process's life.
 *
 * V8 loads a snapshot only into the node binary that made it and under the flags it was made with; any other node
 * exits at start (code 14). The bundle step writes a manifest beside it (`agent.snapshot.json`: the node binary by
 * its real path, size and modification time, and the flags), and the runtime starts the agent with the snapshot only
 * where the manifest names the payload's node and the agent's flags (agentSnapshotProblem), and without it otherwise
 * (a bundle made on another machine, a node upgraded since), as before the snapshot.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The snapshot of the bundle `name` and its manifest, as file names in the bundle directory. */
export function snapshotFiles(name: string): { blob: string; manifest: string } {
  return { blob: `${name}.snapshot`, manifest: `${name}.snapshot.json` };
}

/** What a snapshot was made by and for. */
export interface SnapshotManifest {
  /** The node binary that made it: its real path, size in bytes and modification time (ms since the epoch). */
  node: { path: string; size: number; mtimeMs: number };
  /** The V8 flags it was made under, in order. */
  flags: string[];
}

/** The manifest of a snapshot made now by `node` under `flags` (`node` must exist). */
export function snapshotManifest(node: string, flags: readonly string[]): SnapshotManifest {
  const real = fs.realpathSync(node);
  const st = fs.statSync(real);
  return { node: { path: real, size: st.size, mtimeMs: st.mtimeMs }, flags: [...flags] };
}

/** Why a snapshot with manifest `found` cannot start `wanted`'s node under its flags, or undefined when it can. Pure. */
export function manifestProblem(found: unknown, wanted: SnapshotManifest): string | undefined {
  const m = found as Partial<SnapshotManifest> | null;
  const node = m?.node;
  if (typeof node?.path !== 'string' || typeof node.size !== 'number' || typeof node.mtimeMs !== 'number' || !Array.isArray(m?.flags))
    return 'its manifest is not one the bundle step writes';
  if (node.path !== wanted.node.path) return `it was made by ${node.path}, the agent runs ${wanted.node.path}`;
  if (node.size !== wanted.node.size || node.mtimeMs !== wanted.node.mtimeMs)
    return `${wanted.node.path} has changed since it was made (size or modification time)`;
  if (m!.flags!.join(' ') !== wanted.flags.join(' '))
    return `it was made under the flags "${m!.flags!.join(' ')}", the agent runs under "${wanted.flags.join(' ')}"`;
  return undefined;
}

/**
 * Why the agent in `bundleDir` cannot start from its snapshot with the node binary `node` under `flags`, or undefined
 * when it can: the snapshot and its manifest are there and the manifest names that node and those flags.
 */
export function agentSnapshotProblem(bundleDir: string, node: string, flags: readonly string[]): string | undefined {
  const files = snapshotFiles('agent');
  const blob = path.join(bundleDir, files.blob);
  if (!fs.statSync(blob, { throwIfNoEntry: false })?.isFile()) return `${blob} is missing`;
  const manifest = path.join(bundleDir, files.manifest);
  let found: unknown;
  try {
    found = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  } catch (err) {
    return `${manifest}: ${(err as Error).message}`;
  }
  let wanted: SnapshotManifest;
  try {
    wanted = snapshotManifest(node, flags);
  } catch (err) {
    return `node binary ${node}: ${(err as Error).message}`;
  }
  const problem = manifestProblem(found, wanted);
  return problem === undefined ? undefined : `${blob}: ${problem}`;
}

/** node's options that start from the snapshot of bundle `name` in `bundleDir` (not checked: agentSnapshotProblem). */
export function snapshotBlobArgs(bundleDir: string, name = 'agent'): string[] {
  return ['--snapshot-blob', path.posix.join(bundleDir, snapshotFiles(name).blob)];
}

/**
 * node's options that start the agent of `bundleDir` from its snapshot, for an agent started on the host as the
 * runtime starts it in a sandbox (the benchmarks): the snapshot where it fits `node` and `flags`, none where not.
 */
export function agentSnapshotArgs(bundleDir: string, node: string, flags: readonly string[]): string[] {
  return agentSnapshotProblem(bundleDir, node, flags) === undefined ? snapshotBlobArgs(bundleDir) : [];
}
