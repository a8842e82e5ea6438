/**
 * A lab OCI registry on loopback (Debian's docker-registry, plain HTTP, storage in a temp dir) and an image built in
 * the test from an npm MCP server: the `everything` server bundled into one file, run by this host's node with the
 * libraries it links, packed with umoci and pushed with skopeo. Everything is removed by `close`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** The checkout (from test/ or a benchmark's dist/test/). */
const REPO = (() => {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
})();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface LabRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  close(): Promise<void>;
}

export async function startLabRegistry(): Promise<LabRegistry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-registry-'));
  const port = await freePort();
  const config = path.join(dir, 'config.yml');
  fs.writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: error',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${dir}/data`,
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  const close = async () => {
    // Once only: a child that exited (by a code or a signal) is not waited for again.
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/v2/`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { host: `127.0.0.1:${port}`, close };
    await new Promise((r) => setTimeout(r, 100));
  }
  await close();
  throw new Error('the lab registry did not answer on /v2/');
}

/**
 * What the image runs first: what server processes commonly need of their /dev and /proc, random bytes from
 * /dev/urandom, /dev/null to write to and their own /proc/self/status; without them it exits with the reason, before
 * the server starts.
 */
const START = `import { closeSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
const fd = openSync('/dev/urandom', 'r');
const n = readSync(fd, Buffer.alloc(16));
closeSync(fd);
if (n !== 16) throw new Error('/dev/urandom gave ' + n + ' bytes');
writeFileSync('/dev/null', 'discarded');
const status = readFileSync('/proc/self/status', 'utf8');
if (!status.split('\\n').includes('Pid:\\t' + process.pid)) throw new Error('/proc/self/status is not this process: ' + status.slice(0, 200));
await import('./everything.mjs');
`;

/**
 * Builds an image whose entrypoint runs the `everything` MCP server on stdio (after START), and pushes it as
 * `<host>/<name>`. No /bin/sh in it: the gateway must run its entrypoint as the image says.
 */
export function pushEverythingImage(registryHost: string, name: string): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-mcp-image-'));
  try {
    const rootfs = path.join(dir, 'rootfs');
    fs.mkdirSync(path.join(rootfs, 'srv'), { recursive: true });
    fs.mkdirSync(path.join(rootfs, 'usr', 'bin'), { recursive: true });
    execFileSync(
      path.join(REPO, 'node_modules', '.bin', 'esbuild'),
      [
        path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'),
        '--bundle',
        '--platform=node',
        '--format=esm',
        '--log-level=error',
        `--outfile=${path.join(rootfs, 'srv', 'everything.mjs')}`,
        "--banner:js=import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      ],
      { stdio: 'pipe' },
    );
    fs.writeFileSync(path.join(rootfs, 'srv', 'start.mjs'), START);
    const node = fs.realpathSync(process.execPath);
    fs.copyFileSync(node, path.join(rootfs, 'usr', 'bin', 'node'));
    fs.chmodSync(path.join(rootfs, 'usr', 'bin', 'node'), 0o755);
    for (const lib of execFileSync('ldd', [node], { encoding: 'utf8' }).match(/\/\S+/g) ?? []) {
      fs.mkdirSync(path.join(rootfs, path.dirname(lib)), { recursive: true });
      fs.copyFileSync(fs.realpathSync(lib), path.join(rootfs, lib));
    }
    const layout = path.join(dir, 'layout');
    const image = `${layout}:latest`;
    const bundle = path.join(dir, 'bundle');
    const umoci = (...args: string[]) => execFileSync('umoci', args, { stdio: 'pipe' });
    umoci('init', '--layout', layout);
    umoci('new', '--image', image);
    umoci('unpack', '--image', image, bundle);
    execFileSync('cp', ['-a', `${rootfs}/.`, path.join(bundle, 'rootfs')]);
    umoci('repack', '--image', image, bundle);
    umoci(
      'config',
      '--image',
      image,
      '--config.entrypoint',
      '/usr/bin/node',
      '--config.cmd',
      '/srv/start.mjs',
      '--config.cmd',
      'stdio',
      '--config.env',
      'PATH=/usr/bin:/bin',
    );
    execFileSync('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci:${image}`, `docker://${registryHost}/${name}`], {
      stdio: 'pipe',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A gate in front of a registry (plain HTTP on loopback) that holds back what the test says: `hold(repo)` holds
 * every GET of one of the repository's layer blobs (its manifest and config pass), or every request of a repository
 * the registry does not have, until `release(repo)` passes them on or `fail(repo)` answers them, and every later
 * request of that repository, with a 503. `waiting(repo)`: how many requests it holds now.
 */
export interface RegistryGate {
  host: string;
  hold(repo: string): Promise<void>;
  release(repo: string): void;
  fail(repo: string): void;
  waiting(repo: string): number;
  close(): Promise<void>;
}

const MANIFEST_TYPES = ['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json'];

export async function startRegistryGate(upstream: string): Promise<RegistryGate> {
  const held = new Map<string, { layers: Set<string> | 'all'; waiting: Array<(pass: boolean) => void> }>();
  const failing = new Set<string>();
  const sockets = new Set<net.Socket>();
  const repoOf = (url: string) => /^\/v2\/(.+?)\/(?:blobs|manifests|tags)\//.exec(url)?.[1];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const repo = repoOf(url);
    const fail = () => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'UNAVAILABLE', message: 'the lab registry is failing on purpose' }] }));
    };
    const pass = () => {
      const up = http.request(
        `http://${upstream}${url}`,
        { method: req.method, headers: { ...req.headers, host: upstream }, agent: false },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (repo !== undefined && failing.has(repo)) return fail();
    const gate = repo === undefined ? undefined : held.get(repo);
    const digest = /\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url)?.[1];
    if (gate && (gate.layers === 'all' || (req.method === 'GET' && digest !== undefined && gate.layers.has(digest)))) {
      const wait = (go: boolean) => (go ? pass() : fail());
      gate.waiting.push(wait);
      res.on('close', () => {
        const i = gate.waiting.indexOf(wait);
        if (i >= 0) gate.waiting.splice(i, 1);
      });
      return;
    }
    pass();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const settle = (repo: string, go: boolean) => {
    const gate = held.get(repo);
    held.delete(repo);
    for (const wait of gate?.waiting.splice(0) ?? []) wait(go);
  };
  return {
    host: `127.0.0.1:${port}`,
    async hold(repo) {
      const res = await fetch(`http://${upstream}/v2/${repo}/manifests/latest`, { headers: { accept: MANIFEST_TYPES.join(', ') } });
      if (res.status === 404) return void held.set(repo, { layers: 'all', waiting: [] });
      if (!res.ok) throw new Error(`${repo}: the registry answered ${res.status} for its manifest`);
      const manifest = (await res.json()) as { layers: Array<{ digest: string }> };
      held.set(repo, { layers: new Set(manifest.layers.map((l) => l.digest)), waiting: [] });
    },
    release: (repo) => settle(repo, true),
    fail(repo) {
      failing.add(repo);
      settle(repo, false);
    },
    waiting: (repo) => held.get(repo)?.waiting.length ?? 0,
    async close() {
      for (const repo of [...held.keys()]) settle(repo, false);
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
