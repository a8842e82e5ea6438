/**
 * Bundles the kit's standalone programs into single files under dist/bundle with esbuild, so they run with a bare
 * node binary and no node_modules (the agent inside every sandbox runs this way). Add a program by adding a line to
 * bundleEntries(). Beside the bundles: run.js (scripts/bundle-loader.js), which starts `<name>.js` with V8's code cache
 * `<name>.js.cache`, made here by this node binary (the one the sandboxes get) by running the bundle (produceCodeCache).
 * Every file goes into place by a rename (replaceFile), never written over: sandboxes run their agent from this
 * directory (bound in), and a bundle made while they run must not touch the files their agents have open or mapped.
 * Usage: node dist/scripts/bundle.js [name...]   (default: all)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { build, type OutputFile, type Plugin } from 'esbuild';
import { agentNodeFlags } from '../src/runtime/agent-payload';
import { NATIVE_ADDONS, NATIVE_PROGRAMS } from './build-native';

export interface BundleEntry {
  /** Output file dist/bundle/<name>.js. */
  name: string;
  /** Entry module, relative to the project root. */
  entry: string;
  /** The entry is a CLI command module (`run(argv)` resolving to the exit code) rather than a program. */
  commandModule?: boolean;
  /** Also make V8's code cache for it (it starts often and its start-up time counts: the agent). */
  codeCache?: boolean;
  /** The node flags it runs with; its code cache is made under them (the loader says how it takes V8's flags). */
  nodeFlags?: string[];
  /** Files it reads beside itself at run time (relative to the project root), copied next to the bundle. */
  assets?: string[];
  /**
   * Minify it (names of functions and classes kept): a program every sandbox runs, whose source V8 holds in each one's
   * memory. The agent's: 542 KiB to about 260 KiB, 0.8 MiB less anonymous memory per idle agent.
   */
  minify?: boolean;
}

const ROOT = path.resolve(__dirname, fs.existsSync(path.resolve(__dirname, '../package.json')) ? '..' : '../..');

/** The agent's standalone entry once it exists; until then the CLI's `agent` command module (same flags). */
function agentEntry(): BundleEntry {
  // The agent's own addons (scripts/build-native.ts) go beside it, where it loads them from.
  const assets = NATIVE_ADDONS.map((a) => a.output);
  return fs.existsSync(path.join(ROOT, 'src/agent/main.ts'))
    ? {
        name: 'agent',
        entry: 'src/agent/main.ts',
        codeCache: true,
        minify: true,
        nodeFlags: agentNodeFlags(),
        assets,
      }
    : { name: 'agent', entry: 'src/cli/commands/agent.ts', commandModule: true, codeCache: true, nodeFlags: agentNodeFlags(), assets };
}

export function bundleEntries(): BundleEntry[] {
  return [
    agentEntry(),
    { name: 'mcp-gateway', entry: 'src/mcp/gateway/main.ts' },
    // The code-interpreter-v1 template's server and the Python bridge it drives the Jupyter kernels with.
    { name: 'code-interpreter', entry: 'src/code-interpreter/main.ts', assets: ['src/code-interpreter/kernel-bridge.py'] },
    // The egress relay the platform runs in a bridge namespace for sandboxes with domain rules or a proxy.
    { name: 'egress-relay', entry: 'src/runtime/network/egress-relay/main.ts' },
    // The small process the platform starts its host commands from (src/util/spawn-helper.ts says why).
    { name: 'spawn-helper', entry: 'src/util/spawn-helper-main.ts' },
    // The whole CLI for the sandbox hosts (`platform`, `gateway`, `template build`), installed by their cloud-init,
    // with the helper programs its runtime runs beside it.
    { name: 'sandbox-kit', entry: 'src/cli/main.ts', assets: NATIVE_PROGRAMS.map((p) => p.output) },
  ];
}

export const BUNDLE_DIR = path.join(ROOT, 'dist', 'bundle');

/** Packages the E2B SDK imports at run time for a template build (hashing and packing COPY sources). */
export const SDK_RUNTIME_IMPORTS = ['glob', 'tar'] as const;

/**
 * The E2B SDK loads SDK_RUNTIME_IMPORTS through a helper that hides the import from bundlers, so a bundle without
 * node_modules beside it (the sandbox hosts' CLI) fails its first template build with "Cannot find package 'glob'".
 * This plugin turns those calls into plain imports, which esbuild then bundles; an SDK that no longer loads them
 * this way fails the build here, not on a host.
 */
const sdkRuntimeImports: Plugin = {
  name: 'e2b-runtime-imports',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]e2b[\\/]dist[\\/]index\.js$/ }, async (args) => {
      let text = await fs.promises.readFile(args.path, 'utf8');
      for (const name of SDK_RUNTIME_IMPORTS) {
        const hidden = `dynamicImport(${JSON.stringify(name)})`;
        if (!text.includes(hidden)) throw new Error(`${args.path}: expected ${hidden}; see SDK_RUNTIME_IMPORTS in scripts/bundle.ts`);
        text = text.split(hidden).join(`import(${JSON.stringify(name)})`);
      }
      return { contents: text, loader: 'js' };
    });
  },
};

/**
 * `@napi-rs/xattr`'s own loader picks its native binding by looking for musl in `/usr/bin/ldd` of the file system it
 * runs in. The agent runs in a sandbox, whose `/usr/bin/ldd` is the template's: where the template has none (a
 * distroless image) the loader built a whole diagnostic report instead (about 13 ms of every start), and where it
 * names musl the loader looked for a musl binding that no bundle has, and the agent could not start ("Cannot find
 * native binding"). The binding a bundle can load is the one for the node that runs it, which is the node that makes
 * the bundle (the sandboxes get the host's node binary): this plugin resolves `@napi-rs/xattr` to that binding's
 * package, chosen here, once. Built where that package is not installed, the bundle fails here with the reason.
 */
const xattrBinding: Plugin = {
  name: 'xattr-binding',
  setup(b) {
    b.onResolve({ filter: /^@napi-rs\/xattr$/ }, () => {
      const name = xattrBindingPackage(process.platform, process.arch, glibcRuntime() ? 'gnu' : 'musl');
      try {
        return { path: require.resolve(name, { paths: [ROOT] }) };
      } catch {
        throw new Error(`${name} is not installed: the bundle must be made where its node runs (npm installs that platform's binding)`);
      }
    });
  },
};

/** The package of @napi-rs/xattr's binding for a platform, CPU and C library (the names its loader uses). Pure. */
export function xattrBindingPackage(platform: string, arch: string, libc: 'gnu' | 'musl'): string {
  return `@napi-rs/xattr-${platform}-${arch}${platform === 'linux' ? `-${libc}` : ''}`;
}

/** Whether this node runs on glibc (node's own report says which C library it was started with); asked once. */
let glibc: boolean | undefined;
function glibcRuntime(): boolean {
  glibc ??=
    (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime !== undefined;
  return glibc;
}

/**
 * Puts `data` (or a copy of the file `from`, with its mode) at `file` by writing a new file beside it and renaming it
 * over: a process that has the old file open or mapped keeps the old one, and one starting reads either whole. Written
 * over in place, the native addons a running agent maps lose their pages, and the agent dies (SIGSEGV or SIGBUS).
 */
export function replaceFile(file: string, content: { data: string | Uint8Array } | { from: string }): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    if ('from' in content) fs.copyFileSync(content.from, temp);
    else fs.writeFileSync(temp, content.data);
    fs.renameSync(temp, file);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

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
    // Its files (the bundle and the addons it copies) are put in place here, by replaceFile.
    write: false,
    plugins: [sdkRuntimeImports, xattrBinding],
    ...(entry.minify ? { minify: true, keepNames: true } : {}),
  };
  let outputs: OutputFile[];
  if (entry.commandModule) {
    const contents = [
      `require(${JSON.stringify(`./${entry.entry}`)}).run(process.argv.slice(2)).then(`,
      '  (code) => { process.exitCode = code; },',
      `  (err) => { console.error(\`${entry.name}: \${err instanceof Error ? err.message : String(err)}\`); process.exitCode = 1; },`,
      ');',
    ].join('\n');
    outputs =
      (await build({ ...common, stdin: { contents, resolveDir: ROOT, sourcefile: `${entry.name}-entry.js`, loader: 'js' } })).outputFiles ??
      [];
  } else {
    outputs = (await build({ ...common, entryPoints: [path.join(ROOT, entry.entry)] })).outputFiles ?? [];
  }
  fs.mkdirSync(outDir, { recursive: true });
  for (const o of outputs) replaceFile(o.path, { data: path.resolve(o.path) === path.resolve(outfile) ? asciiOnly(o.text) : o.contents });
  replaceFile(path.join(outDir, LOADER), { from: path.join(ROOT, 'scripts', 'bundle-loader.js') });
  for (const asset of entry.assets ?? []) replaceFile(path.join(outDir, path.basename(asset)), { from: path.join(ROOT, asset) });
  // A startup snapshot and its manifest, which earlier versions made for the agent: nothing reads them any more.
  for (const old of [`${entry.name}.snapshot`, `${entry.name}.snapshot.json`]) fs.rmSync(path.join(outDir, old), { force: true });
  if (entry.codeCache) await produceCodeCache(outDir, entry.name, entry.nodeFlags ?? []);
  return outfile;
}

/**
 * The bundle with every character past ASCII written as a `\uXXXX` escape, so that the loader may read it as latin1
 * and V8 keeps its source as a one-byte string. esbuild already escapes strings, regular expressions and names;
 * what it leaves are comments (zod's, in the agent), and one such character made V8 hold the whole source as a
 * two-byte string. An escape means the same character in a string, a template, a regular expression or a name, and
 * is plain text in a comment. Measured on the agent (idle, its memory cgroup's charge): 29.8 MiB before, 20.4 after.
 */
export function asciiOnly(code: string): string {
  return code.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The loader's file name in the bundle directory: `node run.js <name> args...`. */
export const LOADER = 'run.js';

/**
 * Makes `<name>.js.cache`: runs the bundle through the loader in produce mode, under the node flags the bundle runs
 * with, and the loader writes the cache at exit, covering every function that run compiled. The agent is run as a
 * server on a loopback port and given the calls a create and a first call make (`/health`, `/init`, a Stat, a
 * ListDir), so a sandbox's first calls find their code compiled; any other bundle (or an agent run that fails) runs
 * `--help`. Without a cache (or with one made under other flags, which V8 rejects) the loader compiles normally, so a
 * failure here only costs start-up time; it is reported, not fatal.
 */
async function produceCodeCache(outDir: string, name: string, nodeFlags: string[]): Promise<void> {
  const cache = path.join(outDir, `${name}.js.cache`);
  fs.rmSync(cache, { force: true });
  const run = (args: string[], onOutput?: (text: string, stop: () => void) => void) =>
    new Promise<number>((resolve) => {
      const child = spawn(process.execPath, [...nodeFlags, path.join(outDir, LOADER), name, ...args], {
        stdio: ['ignore', onOutput ? 'pipe' : 'ignore', 'ignore'],
        env: { ...process.env, SANDBOX_KIT_PRODUCE_CODE_CACHE: '1' },
      });
      const stop = () => child.kill('SIGTERM');
      const timer = setTimeout(stop, 10_000);
      let out = '';
      child.stdout?.on('data', (d: Buffer) => onOutput?.((out += d.toString()), stop));
      child.on('error', () => resolve(127));
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c ?? 1);
      });
    });
  let code = -1;
  if (name === 'agent') {
    let started = false;
    let served = false;
    const user = os.userInfo().username;
    code = await run(['--host', '127.0.0.1', '--port', '0', '--default-user', user], (text, stop) => {
      const port = /listening on [^\s]*:(\d+)/.exec(text)?.[1];
      if (port === undefined || started) return;
      started = true;
      agentFirstCalls(Number(port), user)
        .then(() => (served = true))
        .catch(() => undefined)
        .finally(stop);
    });
    if (!served || !fs.existsSync(cache)) {
      fs.rmSync(cache, { force: true });
      console.error(`bundle: the agent's code-cache run did not serve its calls (exit ${code}); using --help`);
    }
  }
  if (!fs.existsSync(cache)) code = await run(['--help']);
  if (!fs.existsSync(cache)) console.error(`bundle: no code cache for ${name} (exit ${code}); it starts without one`);
}

/** The agent's calls of a create (the platform's) and of a first call (a client's), each answered before the next. */
async function agentFirstCalls(port: number, user: string): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  const connect = { 'content-type': 'application/json', 'connect-protocol-version': '1' };
  const calls: Array<[string, RequestInit]> = [
    ['/health', {}],
    [
      '/init',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ envVars: {}, defaultUser: user }) },
    ],
    ['/filesystem.Filesystem/Stat', { method: 'POST', headers: connect, body: JSON.stringify({ path: '/' }) }],
    ['/filesystem.Filesystem/ListDir', { method: 'POST', headers: connect, body: JSON.stringify({ path: '/', depth: 1 }) }],
  ];
  for (const [p, init] of calls) await (await fetch(`${base}${p}`, { ...init, signal: AbortSignal.timeout(5000) })).arrayBuffer();
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
    console.log(
      `bundle: ${entry.name} (${entry.entry}) -> ${path.relative(ROOT, out)}, ${Math.round(fs.statSync(out).size / 1024)} KiB in ${Date.now() - started} ms`,
    );
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
