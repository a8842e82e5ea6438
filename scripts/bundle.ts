/**
 * Bundles the kit's standalone programs into single files under dist/bundle with esbuild, so they run with a bare
 * node binary and no node_modules (the agent inside every sandbox runs this way). Add a program by adding a line to
 * BUNDLES. Usage: node dist/scripts/bundle.js [name...]   (default: all)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';

export interface BundleEntry {
  /** Output file dist/bundle/<name>.js. */
  name: string;
  /** Entry module, relative to the project root. */
  entry: string;
  /** The entry is a CLI command module (`run(argv)` resolving to the exit code) rather than a program. */
  commandModule?: boolean;
}

const ROOT = path.resolve(__dirname, fs.existsSync(path.resolve(__dirname, '../package.json')) ? '..' : '../..');

/** The agent's standalone entry once it exists; until then the CLI's `agent` command module (same flags). */
function agentEntry(): BundleEntry {
  return fs.existsSync(path.join(ROOT, 'src/agent/main.ts'))
    ? { name: 'agent', entry: 'src/agent/main.ts' }
    : { name: 'agent', entry: 'src/cli/commands/agent.ts', commandModule: true };
}

export function bundleEntries(): BundleEntry[] {
  return [agentEntry(), { name: 'mcp-gateway', entry: 'src/mcp/gateway/main.ts' }];
}

export const BUNDLE_DIR = path.join(ROOT, 'dist', 'bundle');

export async function bundle(entry: BundleEntry, outDir = BUNDLE_DIR): Promise<string> {
  const outfile = path.join(outDir, `${entry.name}.js`);
  const common = {
    bundle: true,
    platform: 'node' as const,
    target: 'node20',
    format: 'cjs' as const,
    outfile,
    minify: false,
    sourcemap: false,
    legalComments: 'none' as const,
    logLevel: 'warning' as const,
    // Native addons (the agent's xattr binding) are copied beside the bundle and loaded from there.
    loader: { '.node': 'copy' as const },
  };
  if (entry.commandModule) {
    const contents = [
      `require(${JSON.stringify(`./${entry.entry}`)}).run(process.argv.slice(2)).then(`,
      '  (code) => { process.exitCode = code; },',
      `  (err) => { console.error(\`${entry.name}: \${err instanceof Error ? err.message : String(err)}\`); process.exitCode = 1; },`,
      ');',
    ].join('\n');
    await build({ ...common, stdin: { contents, resolveDir: ROOT, sourcefile: `${entry.name}-entry.js`, loader: 'js' } });
  } else {
    await build({ ...common, entryPoints: [path.join(ROOT, entry.entry)] });
  }
  return outfile;
}

async function main(names: string[]): Promise<number> {
  const entries = bundleEntries();
  const unknown = names.filter((n) => !entries.some((e) => e.name === n));
  if (unknown.length > 0) {
    console.error(`bundle: unknown bundle ${unknown.join(', ')}; known: ${entries.map((e) => e.name).join(', ')}`);
    return 2;
  }
  for (const entry of entries.filter((e) => names.length === 0 || names.includes(e.name))) {
    const started = Date.now();
    const out = await bundle(entry);
    console.log(`bundle: ${entry.name} (${entry.entry}) -> ${path.relative(ROOT, out)}, ${Math.round(fs.statSync(out).size / 1024)} KiB in ${Date.now() - started} ms`);
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`bundle: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
