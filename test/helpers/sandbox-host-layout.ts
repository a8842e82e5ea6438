/**
 * Lays out a sandbox host the way its cloud-init does, for a lab node: the rendered files under /etc go into an /etc
 * layer (the lab's node view of /etc), and the release bundle with the rest of /opt/sandbox-kit into a directory to
 * overlay on /opt in the node's mount namespace. Same paths, same modes, same sums check as on AWS.
 */
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { StackConfig } from '../../src/config';
import { writeLayerFiles } from '../../src/lab/etc-layer';
import { SANDBOX_HOST_PATHS as P, sandboxHostFiles, type SandboxHostInputs } from '../../src/render';

export interface SandboxHostLayout {
  /** The /etc layer directory (systemd units, scripts, the API key). */
  etcLayer: string;
  /** A layer for /opt holding `sandbox-kit/` (overlaid on /opt in the node's mount namespace). */
  optLayer: string;
  /** Its sandbox-kit directory: what the node sees as /opt/sandbox-kit. */
  optDir: string;
  /** The unit files as the node sees them (paths under /etc). */
  units: string[];
}

/** The sha256 of every top-level file of a bundle directory, as the infra program computes them. */
export function bundleSums(bundleDir: string): Record<string, string> {
  const sums: Record<string, string> = {};
  for (const name of readdirSync(bundleDir).sort()) {
    const path = join(bundleDir, name);
    if (statSync(path).isFile()) sums[name] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return sums;
}

export function layOutSandboxHost(dir: string, config: StackConfig, inputs: SandboxHostInputs, bundleDir: string): SandboxHostLayout {
  const etcLayer = join(dir, 'etc-layer');
  const optLayer = join(dir, 'opt-layer');
  const optDir = join(optLayer, 'sandbox-kit');
  mkdirSync(etcLayer, { recursive: true, mode: 0o755 });
  mkdirSync(optDir, { recursive: true, mode: 0o755 });
  const files = sandboxHostFiles(config, inputs);
  const etc = files.filter((f) => f.path.startsWith('/etc/'));
  writeLayerFiles(
    etcLayer,
    etc.map((f) => ({ path: f.path, content: f.content, mode: parseInt(f.permissions, 8) })),
  );
  for (const f of files.filter((file) => file.path.startsWith(`${P.root}/`))) {
    const target = join(optDir, f.path.slice(P.root.length + 1));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.content, { mode: parseInt(f.permissions, 8) });
    chmodSync(target, parseInt(f.permissions, 8));
  }
  // What install-bundle.sh does after the download: every file, checked against the sums the user data carries.
  const lib = join(optDir, P.lib.slice(P.root.length + 1));
  mkdirSync(lib, { recursive: true });
  for (const [name, sum] of Object.entries(inputs.bundle.sums)) {
    copyFileSync(join(bundleDir, name), join(lib, name));
    const got = createHash('sha256')
      .update(readFileSync(join(lib, name)))
      .digest('hex');
    if (got !== sum) throw new Error(`bundle file ${name}: sha256 ${got}, the user data says ${sum}`);
  }
  const others = files.filter((f) => !f.path.startsWith('/etc/') && !f.path.startsWith(`${P.root}/`));
  if (others.length > 0) throw new Error(`the lab cannot place ${others.map((f) => f.path).join(', ')}`);
  return { etcLayer, optLayer, optDir, units: etc.filter((f) => f.path.startsWith(`${P.units}/`)).map((f) => f.path) };
}
