/**
 * Bundles a TypeScript entry point into one file for a plain Node process: our sources inlined, packages left to
 * Node's own resolution. The E2B SDK loads ESM-only packages that jest's module system cannot, so the SDK children,
 * the built CLI and the scripts the tests run go this way.
 */
import { buildSync } from 'esbuild';

export function bundleForNode(entry: string, outfile: string): void {
  buildSync({
    entryPoints: [entry],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
}
