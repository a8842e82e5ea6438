import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_AGENT, BUNDLE_CLI } from './constants';

/** The release bundle as built on the deploying machine: its directory and the sha256 of every file. */
export interface BundleFiles {
  dir: string;
  /** File name -> sha256 hex. */
  sums: Record<string, string>;
  /** One digest over every name and sum: the S3 object's key, so a new build is a new object. */
  digest: string;
}

/** The digest of a set of sums, independent of listing order. */
export function bundleDigest(sums: Readonly<Record<string, string>>): string {
  const lines = Object.keys(sums)
    .sort()
    .map((name) => `${sums[name]}  ${name}\n`)
    .join('');
  return createHash('sha256').update(lines).digest('hex');
}

/**
 * Reads dist/bundle (or the given directory): every regular file at its top level. The hosts run the CLI bundle and
 * place the agent bundle into sandboxes, so both must be there.
 */
export function readBundle(dir: string): BundleFiles {
  const fix = 'build it first: npm run build && node dist/scripts/bundle.js (or set SANDBOX_KIT_BUNDLE_DIR)';
  if (!existsSync(dir)) throw new Error(`release bundle ${dir} not found; ${fix}`);
  const sums: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    sums[name] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  const missing = [BUNDLE_CLI, BUNDLE_AGENT].filter((name) => !(name in sums));
  if (missing.length > 0) throw new Error(`release bundle ${dir} lacks ${missing.join(' and ')}; ${fix}`);
  return { dir, sums, digest: bundleDigest(sums) };
}
