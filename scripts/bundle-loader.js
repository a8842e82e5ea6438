/**
 * Starts a bundle with V8's code cache: `node run.js <name> [args...]` runs <name>.js from this directory, compiled
 * with <name>.js.cache when that cache was made by this same node binary (V8 rejects it otherwise, and the bundle is
 * compiled normally). With SANDBOX_KIT_PRODUCE_CODE_CACHE=1 it runs the bundle and writes the cache at exit, so the
 * cache covers the functions its start-up ran. Written by scripts/bundle.ts; kept plain JavaScript so it runs
 * without a build step.
 *
 * It is also the script a bundle's V8 startup snapshot is built from (`node <flags> --build-snapshot run.js`,
 * src/runtime/agent-snapshot.ts). Then it only registers its start as the snapshot's main function, so a node started
 * from the snapshot as `node <flags> --snapshot-blob <name>.snapshot <dir>/run.js <name> args...` starts the bundle
 * as above without node's main-module steps (the path's resolution, package scope lookup, compiling this file: about
 * 3 ms of each agent's start). Any other script named there runs as node's main module, as `node FILE args...`
 * would. As a snapshot builder it requires only node's built-in modules, and only those the builder supports at the
 * top (node:fs, node:path, node:v8); the others when it starts.
 */
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');

/** Runs the bundle named by argv[2] from `dir`, with argv as `node <dir>/<name>.js args...` would see it. */
function startBundle(dir) {
  const vm = require('node:vm');
  const Module = require('node:module');
  const name = process.argv[2];
  if (!name || !/^[a-z][a-z0-9-]*$/.test(name)) {
    console.error('usage: node run.js <bundle name> [args...]');
    process.exit(2);
  }
  const file = path.join(dir, `${name}.js`);
  const cacheFile = `${file}.cache`;
  const produce = process.env.SANDBOX_KIT_PRODUCE_CODE_CACHE === '1';
  delete process.env.SANDBOX_KIT_PRODUCE_CODE_CACHE;
  let cachedData;
  if (!produce) {
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
  }
  // latin1, not utf8: the bundle is ASCII only (asciiOnly in bundle.ts), so both read it alike, but a latin1 read gives
  // V8 a one-byte string, where the utf8 decoder's two-byte copy cost the agent about 6 MiB at idle.
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'latin1')), { filename: file, cachedData });
  cachedData = undefined;
  const mod = new Module(file, null);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(dir);
  mod.loaded = true;
  process.mainModule = mod;
  process.argv.splice(1, 2, file);
  // Written beside and renamed into place, as every file here (scripts/bundle.ts, replaceFile): an agent starting
  // meanwhile reads the old cache or the new one, whole.
  if (produce)
    process.once('exit', () => {
      const temp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(temp, script.createCachedData());
      fs.renameSync(temp, cacheFile);
    });
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, dir);
}

if (v8.startupSnapshot.isBuildingSnapshot()) {
  const loader = path.basename(__filename);
  v8.startupSnapshot.setDeserializeMainFunction(() => {
    const file = process.argv[1];
    if (file === undefined) {
      console.error('usage: node --snapshot-blob BLOB run.js <bundle name> [args...]');
      process.exit(2);
    }
    // The argv node gives a snapshot's main function is as typed; node resolves a main module's path itself.
    const resolved = path.resolve(file);
    if (path.basename(resolved) === loader) return startBundle(path.dirname(resolved));
    process.argv[1] = resolved;
    require('node:module').runMain();
  });
} else {
  startBundle(__dirname);
}
