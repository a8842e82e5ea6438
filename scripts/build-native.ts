/**
 * Builds the kit's native parts with gcc: addons, C files against Node-API only (node_api.h, which every node install
 * ships in `<prefix>/include/node`), compiled straight to a `.node` beside the compiled module that loads it, so
 * `dist/src/...` finds it as the agent's bundle does (scripts/bundle.ts copies it beside the bundle), and helper
 * programs the kit runs, beside the module that runs them. Node-API keeps one build loadable by any node of the line
 * the kit runs on; gcc and libc6-dev come from scripts/setup-host.sh.
 * Usage: node dist/scripts/build-native.js
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, fs.existsSync(path.resolve(__dirname, '../package.json')) ? '..' : '../..');

export interface NativeAddon {
  /** C source, relative to the project root. */
  source: string;
  /** What it becomes, relative to the project root: beside the compiled module that loads or runs it. */
  output: string;
  /** A program (an executable) rather than a Node-API addon. */
  program?: boolean;
}

export const NATIVE_ADDONS: NativeAddon[] = [
  // ListDir's walk on a pool thread (src/agent/filesystem/native-walk.ts loads it).
  { source: 'src/agent/filesystem/native-walk.c', output: 'dist/src/agent/filesystem/native-walk.node' },
];

export const NATIVE_PROGRAMS: NativeAddon[] = [
  // A sandbox disk's loop mount without util-linux's scan of every loop device (src/runtime/sandbox-disk.ts runs it).
  { source: 'src/runtime/loop-mount.c', output: 'dist/src/runtime/loop-mount', program: true },
  // Every OCI runtime call's private mount namespace and stage without util-linux's read of the mount table
  // (src/runtime/oci-cli.ts runs it).
  { source: 'src/runtime/private-mounts.c', output: 'dist/src/runtime/private-mounts', program: true },
  // A sandbox's bridge port plugged in with netlink alone, not `ip` and `bridge`, which read every link of the
  // namespace first (src/runtime/network/bridge-network.ts runs it).
  { source: 'src/runtime/network/port-plug.c', output: 'dist/src/runtime/network/port-plug', program: true },
  // A sandbox's link moved into its namespace, named and configured by one process, not four `ip` runs (three through
  // nsenter) (src/runtime/network/join-link.ts runs it).
  { source: 'src/runtime/network/netns-join.c', output: 'dist/src/runtime/network/netns-join', program: true },
];

/** node_api.h of the running node: `<prefix>/include/node`, as node installs it (the distribution's, or /usr's). */
export function nodeHeaders(): string {
  const candidates = [path.join(path.dirname(path.dirname(process.execPath)), 'include', 'node'), '/usr/include/node'];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')));
  if (!found) throw new Error(`node_api.h not found in ${candidates.join(' or ')}: install node's headers (they come with node)`);
  return found;
}

export function buildAddon(addon: NativeAddon, headers = nodeHeaders()): void {
  const out = path.join(ROOT, addon.output);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const args = ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-Werror', '-s', ...(addon.program ? [] : ['-fPIC', '-shared', '-I', headers])];
  args.push('-o', out, path.join(ROOT, addon.source));
  const res = spawnSync('gcc', args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (res.error) throw new Error(`gcc could not run (${res.error.message}): install gcc and libc6-dev (scripts/setup-host.sh)`);
  if (res.status !== 0) throw new Error(`gcc failed on ${addon.source} (exit ${res.status})`);
}

if (require.main === module) {
  try {
    const headers = nodeHeaders();
    for (const addon of [...NATIVE_ADDONS, ...NATIVE_PROGRAMS]) {
      buildAddon(addon, headers);
      console.log(`build-native: ${addon.source} -> ${addon.output}`);
    }
  } catch (err) {
    console.error(`build-native: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
