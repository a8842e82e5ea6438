/**
 * Starts a bundle with V8's code cache: `node run.js <name> [args...]` runs <name>.js from this directory, compiled
 * with <name>.js.cache when that cache was made by this same node binary (V8 rejects it otherwise, and the bundle is
 * compiled normally). With SANDBOX_KIT_PRODUCE_CODE_CACHE=1 it runs the bundle and writes the cache at exit, so the
 * cache covers the functions its start-up ran. Written by scripts/bundle.ts; kept plain JavaScript so it runs
 * without a build step.
 */
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const name = process.argv[2];
if (!name || !/^[a-z][a-z0-9-]*$/.test(name)) {
  console.error('usage: node run.js <bundle name> [args...]');
  process.exit(2);
}
const file = path.join(__dirname, `${name}.js`);
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
// latin1, not utf8: the bundle is ASCII only (asciiOnly in bundle.ts), so both read it alike, but a latin1 read gives V8
// a one-byte string it keeps outside its heap, where the utf8 decoder's copy costs the agent about 6 MiB at idle.
const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'latin1')), { filename: file, cachedData });
cachedData = undefined;
const mod = new Module(file, null);
mod.filename = file;
mod.paths = Module._nodeModulePaths(path.dirname(file));
mod.loaded = true;
process.mainModule = mod;
process.argv.splice(1, 2, file);
// Written beside and renamed into place, as every file here (scripts/bundle.ts, replaceFile): an agent starting meanwhile
// reads the old cache or the new one, whole.
if (produce)
  process.once('exit', () => {
    const temp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(temp, script.createCachedData());
    fs.renameSync(temp, cacheFile);
  });
script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
