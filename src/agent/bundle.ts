/**
 * The agent as one self-contained JavaScript file, as the runtime places it in every sandbox: esbuild bundles
 * main.ts with everything it imports. The one native piece, the extended-attribute addon (@napi-rs/xattr, the
 * build for this machine), is embedded as bytes; at start the agent writes it to a private temporary file, loads
 * it and unlinks it, so the bundle never reads a file that sits next to it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build, type Plugin } from 'esbuild';

const MAIN = path.join(__dirname, 'main.ts');

function nativeAddonPath(): string {
  const pkg = `@napi-rs/xattr-${process.platform}-${process.arch}${process.platform === 'linux' ? '-gnu' : ''}`;
  const dir = path.dirname(require.resolve(`${pkg}/package.json`));
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.node'));
  if (!file) throw new Error(`no .node file in ${dir}`);
  return path.join(dir, file);
}

const embedXattr: Plugin = {
  name: 'embed-xattr-addon',
  setup(b) {
    b.onResolve({ filter: /^@napi-rs\/xattr$/ }, () => ({ path: 'xattr', namespace: 'embedded-addon' }));
    b.onLoad({ filter: /.*/, namespace: 'embedded-addon' }, () => ({
      loader: 'js',
      contents: `
        const fs = require('node:fs'), os = require('node:os'), path = require('node:path'), crypto = require('node:crypto');
        const bytes = Buffer.from(${JSON.stringify(fs.readFileSync(nativeAddonPath()).toString('base64'))}, 'base64');
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), '.agent-addon-'));
        const file = path.join(dir, crypto.randomBytes(6).toString('hex') + '.node');
        fs.writeFileSync(file, bytes, { mode: 0o500 });
        const mod = { exports: {} };
        try { process.dlopen(mod, file); } finally { fs.rmSync(dir, { recursive: true, force: true }); }
        module.exports = mod.exports;`,
    }));
  },
};

/** Writes the bundle to `outfile`. */
export async function bundleAgent(outfile: string): Promise<void> {
  await build({
    entryPoints: [MAIN],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile,
    plugins: [embedXattr],
    logLevel: 'error',
    legalComments: 'none',
  });
}
