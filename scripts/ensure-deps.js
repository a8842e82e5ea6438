#!/usr/bin/env node
// Installs the npm dependencies when node_modules does not match package-lock.json (a fresh clone, or a lock file
// changed by a pull), so `npm start` and `npm test` work right after `git clone`. Plain JavaScript with no
// dependencies: it runs before anything is installed or built.
//   node scripts/ensure-deps.js           check, and run `npm ci` when something is missing or at another version
//   node scripts/ensure-deps.js --check   only report; exit 1 when an install is needed
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const root = join(__dirname, '..');

/** Packages of the lock file that are missing from node_modules or installed at another version. */
function mismatches() {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const out = [];
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    // '' is the project itself; optional packages are platform-specific and may rightly be absent; links are local.
    if (path === '' || entry.optional || entry.link) continue;
    const manifest = join(root, path, 'package.json');
    if (!existsSync(manifest)) {
      out.push(`${path.replace(/^.*node_modules\//, '')} missing`);
      continue;
    }
    const installed = String(JSON.parse(readFileSync(manifest, 'utf8')).version).replace(/^v/, '');
    if (entry.version && installed !== entry.version)
      out.push(`${path.replace(/^.*node_modules\//, '')} ${installed} (lock: ${entry.version})`);
  }
  return out;
}

const wrong = mismatches();
if (wrong.length === 0) {
  console.log('[deps] node_modules matches package-lock.json');
  process.exit(0);
}
const shown = wrong.slice(0, 5).join(', ') + (wrong.length > 5 ? `, and ${wrong.length - 5} more` : '');
if (process.argv.includes('--check')) {
  console.error(`[deps] node_modules does not match package-lock.json: ${shown}`);
  process.exit(1);
}
console.log(`[deps] node_modules does not match package-lock.json (${shown}); installing with npm ci`);
const started = Date.now();
const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
if (npm.status !== 0) {
  console.error(`[deps] npm ci failed (exit ${npm.status ?? npm.signal}); fix the error above and run it again`);
  process.exit(1);
}
console.log(`[deps] installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
