/**
 * Starts a bundle with V8's code cache: `node run.js <name> [args...]` runs <name>.js from this directory, compiled
 * with <name>.js.cache when that cache was made by this same node binary (V8 rejects it otherwise, and the bundle is
 * compiled normally). With SANDBOX_KIT_PRODUCE_CODE_CACHE=1 it runs the bundle and writes the cache at exit, so the
 * cache covers the functions its start-up ran. Written by scripts/bundle.ts; kept plain JavaScript so it runs
 * without a build step.
 *
 * First it gives V8's heap-size flags their default values back (the agent starts with two: agentNodeFlags). V8 reads
 * them once, when node makes the heap, so the limits stay; but V8 takes a code cache only under the flags it was made
 * with, and node's own cache of its built-in modules is made under the defaults: with the flags still set, node
 * compiled every built-in module the agent loads again at every start (about 25 ms of CPU; docs/agent.md, "Start-up").
 * The bundle's own cache is then made and taken under the defaults too. A worker thread started after the reset would
 * get V8's default heap sizes: give it `resourceLimits` (the agent starts none).
 */
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');

/** V8's flags that size the heap, read only when the heap is made; the default of each is 0 (V8 sizes it itself). */
const HEAP_SIZE_FLAGS = ['max-old-space-size', 'max-semi-space-size'];

/** Sets each heap-size flag given on node's command line back to V8's default (above). */
function restoreHeapSizeFlags() {
  for (const arg of process.execArgv) {
    const name = /^--([a-z_-]+)=/.exec(arg)?.[1]?.replace(/_/g, '-');
    if (name !== undefined && HEAP_SIZE_FLAGS.includes(name)) v8.setFlagsFromString(`--${name}=0`);
  }
}

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

restoreHeapSizeFlags();
startBundle(__dirname);
