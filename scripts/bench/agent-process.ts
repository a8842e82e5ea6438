/**
 * Agent process and file benchmark, each figure beside a peer measured in the same run:
 *  1. `commands.run('true')` round trip with the unmodified E2B SDK through the gateway (p50/p99), beside the floor:
 *     spawning /bin/true, and `/bin/bash -l -c true` (what the SDK asks the agent to run), from this Node process.
 *  2. A process writing to stdout: 256 MiB received by the SDK (it keeps a command's whole output in one string,
 *     and V8 strings stop at 512 MiB), and 1 GiB read raw from the agent (framing counted, nothing decoded), beside
 *     curl downloading a 1 GiB file from nginx (a plain static file server) on the same loopback link.
 *  3. /files upload and download of a 1 GiB file with curl, to the agent and to nginx (MB/s).
 *  4. The agent's idle RSS (VmRSS after /init, before any load) and its peak (VmHWM) at the end.
 * The agent runs as the runtime ships it (the esbuild bundle of src/agent/main.ts, a child process).
 *  5. With --sandbox (root; it puts one link into the root namespace, on a /24 of its own): the
 *     same round trip into a real crun sandbox (the agent under tini, cached Debian base), through the gateway,
 *     beside `crun exec <sandbox> /bin/true` and `crun exec <sandbox> /bin/bash -l -c true`.
 *
 *   node dist/scripts/bench/agent-process.js [--runs 200] [--gib 1] [--sandbox] [--json FILE]
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { bundle, bundleEntries } from '../bundle';
import { MemoryCatalog } from '../../src/catalog/memory';
import { DEFAULT_AGENT_PORT } from '../../src/contract/agent-port';
import { ENVD_VERSION } from '../../src/contract/envd-version';
import { startGateway } from '../../src/gateway';
import { freePort } from '../../test/helpers/free-port';

function log(msg: string): void {
  process.stderr.write(`agent-process: ${msg}\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(ms: number[]): { p50: number; p99: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: +percentile(s, 50).toFixed(2), p99: +percentile(s, 99).toFixed(2) };
}

function spawnOnce(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(file, args, { stdio: 'ignore' });
    c.once('error', reject);
    c.once('exit', () => resolve());
  });
}

async function timeEach(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

function status(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function curl(args: string[]): Promise<{ seconds: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{size_upload}', ...args], (err, stdout, stderr) => {
      if (err) return reject(new Error(`curl ${args.join(' ')}: ${stderr || err.message}`));
      const [t, down, up] = stdout.trim().split(' ').map(Number);
      resolve({ seconds: t!, bytes: Math.max(down!, up!) });
    });
  });
}

const mbps = (bytes: number, seconds: number) => +(bytes / 1e6 / seconds).toFixed(1);

async function startAgentChild(bundlePath: string, host: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bundlePath, '--host', host, '--port', String(DEFAULT_AGENT_PORT), '--default-user', 'root'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('agent listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code}`)));
  });
  return child;
}

async function startNginxFiles(dir: string, port: number): Promise<ChildProcess> {
  fs.mkdirSync(path.join(dir, 'www'), { recursive: true });
  const conf = `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  sendfile off;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/www;
    location /upload { client_max_body_size 0; client_body_in_file_only clean; client_body_buffer_size 1m; proxy_pass http://127.0.0.1:${port}/ok; }
    location /ok { return 204; }
  }
}
`;
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const child = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir, '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/missing`);
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('nginx did not start');
}

/** Seconds to receive a Start stream of `bytes` of stdout with a client that only counts bytes (no decoding). */
async function rawStream(agentUrl: string, token: string, bytes: number): Promise<number> {
  const http = await import('node:http');
  const body = Buffer.from(JSON.stringify({ process: { cmd: '/bin/sh', args: ['-c', `head -c ${bytes} /dev/zero`] } }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  const t0 = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const req = http.request(`${agentUrl}/process.Process/Start`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json', 'connect-protocol-version': '1', 'x-access-token': token },
    });
    req.on('response', (res) => {
      res.on('data', () => {});
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(Buffer.concat([head, body]));
  });
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Round trips into a real crun sandbox: the SDK through the gateway vs `crun exec`, same sandbox, same run. */
async function sandboxRoundTrips(runs: number): Promise<Record<string, unknown>> {
  const { MmdebstrapImages } = await import('../../src/runtime/base-images');
  const { defaultAgentPayload } = await import('../../src/runtime/agent-payload');
  const { createSandboxHostNetwork } = await import('../../src/runtime/network/host-network');
  const { createOciRuntime } = await import('../../src/runtime/oci-runtime');
  const { cleanupLeftovers } = await import('../../src/runtime/cleanup');
  const suffix = Math.random().toString(36).slice(2, 8);
  const scratch = fs.mkdtempSync('/var/tmp/sk-agent-bench-');
  const rootfs = await new MmdebstrapImages().rootfs('debian:bookworm', (line) => log(`rootfs: ${line}`));
  const bundleDir = path.join(scratch, 'bundle');
  for (const entry of bundleEntries()) await bundle(entry, bundleDir);
  const hostNet = await createSandboxHostNetwork(`ab${suffix}`);
  const instance = `b${suffix}`;
  const roots = { stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') };
  const rt = createOciRuntime({
    instance,
    runtime: 'crun',
    ...roots,
    network: hostNet.network,
    agent: { ...defaultAgentPayload(), bundleDir },
  });
  const id = `bench${suffix}`;
  const token = `bench-${suffix}`;
  const closers: Array<() => Promise<unknown>> = [];
  try {
    log('creating a crun sandbox');
    const network = await hostNet.network.attach(id);
    await rt.create({ sandboxID: id, layers: [rootfs], memoryMB: 512, cpuCount: 1, network });
    const agentUrl = `http://${network.address}:${DEFAULT_AGENT_PORT}`;
    for (let i = 0; i < 200; i++) {
      try {
        if ((await fetch(`${agentUrl}/health`)).status === 204) break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const init = await fetch(`${agentUrl}/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accessToken: token, defaultUser: 'root' }),
    });
    if (init.status !== 204) throw new Error(`/init answered ${init.status}`);
    const gateway = await startGateway({
      catalog: new MemoryCatalog([{ sandboxID: id, host: network.address, agentPort: DEFAULT_AGENT_PORT, token }]),
    });
    closers.push(() => gateway.close());
    const http = await import('node:http');
    const platform = http.createServer((req, res) => {
      req.resume();
      const body = JSON.stringify({ sandboxID: id, templateID: 'base', envdVersion: ENVD_VERSION, envdAccessToken: token });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    await new Promise<void>((r) => platform.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => platform.close(() => r())));
    const { Sandbox } = await import('e2b');
    const sbx = await Sandbox.connect(id, {
      apiUrl: `http://127.0.0.1:${(platform.address() as { port: number }).port}`,
      sandboxUrl: `http://127.0.0.1:${gateway.port}`,
      apiKey: 'bench',
    });
    const crunTrue = rt.cli.execArgv(id, ['/bin/true']);
    const crunBash = rt.cli.execArgv(id, ['/bin/bash', '-l', '-c', 'true']);
    log(`round trips: ${runs} each of commands.run('true') via the gateway, crun exec /bin/true, crun exec bash -l -c true`);
    await timeEach(10, () => sbx.commands.run('true'));
    await timeEach(10, () => spawnOnce(crunTrue[0]!, crunTrue.slice(1)));
    const sdk = summary(await timeEach(runs, () => sbx.commands.run('true')));
    const execTrue = summary(await timeEach(runs, () => spawnOnce(crunTrue[0]!, crunTrue.slice(1))));
    const execBash = summary(await timeEach(runs, () => spawnOnce(crunBash[0]!, crunBash.slice(1))));
    return {
      sandboxRoundTripMs: { sdkThroughGateway: sdk, crunExecTrue: execTrue, crunExecBashLogin: execBash },
      ratioP50: { vsCrunExecTrue: +(sdk.p50 / execTrue.p50).toFixed(2), vsCrunExecBashLogin: +(sdk.p50 / execBash.p50).toFixed(2) },
      ratioP99: { vsCrunExecTrue: +(sdk.p99 / execTrue.p99).toFixed(2), vsCrunExecBashLogin: +(sdk.p99 / execBash.p99).toFixed(2) },
    };
  } finally {
    for (const c of closers.reverse()) await c().catch(() => {});
    await cleanupLeftovers({ instance, ...roots, network: hostNet.network }).catch(() => undefined);
    await hostNet.close().catch(() => {});
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '200' },
      gib: { type: 'string', default: '1' },
      sandbox: { type: 'boolean', default: false },
      json: { type: 'string' },
    },
  });
  if (values.sandbox) {
    const result = await sandboxRoundTrips(Number(values.runs));
    console.log(JSON.stringify(result, null, 2));
    if (values.json) fs.writeFileSync(values.json, JSON.stringify(result, null, 2));
    return;
  }
  const runs = Number(values.runs);
  const bytes = Math.round(Number(values.gib) * 1024 ** 3);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-process-bench-'));
  const token = `bench-${Math.random().toString(36).slice(2)}`;
  const host = `127.${30 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  const sandboxID = `bench${Math.random().toString(36).slice(2, 10)}`;
  const children: ChildProcess[] = [];
  const closers: Array<() => Promise<void>> = [];
  try {
    log('bundling the agent');
    const entry = bundleEntries().find((e) => e.name === 'agent')!;
    const agentJs = await bundle(entry, work);
    const agent = await startAgentChild(agentJs, host);
    children.push(agent);
    const agentUrl = `http://${host}:${DEFAULT_AGENT_PORT}`;
    const init = await fetch(`${agentUrl}/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accessToken: token, defaultUser: 'root' }),
    });
    if (init.status !== 204) throw new Error(`/init answered ${init.status}`);
    await new Promise((r) => setTimeout(r, 500));
    const idleRss = status(agent.pid!, 'VmRSS');
    log(`agent idle RSS ${(idleRss / 1024 / 1024).toFixed(1)} MiB`);

    const gateway = await startGateway({ catalog: new MemoryCatalog([{ sandboxID, host, agentPort: DEFAULT_AGENT_PORT, token }]) });
    closers.push(() => gateway.close());
    const gatewayUrl = `http://127.0.0.1:${gateway.port}`;

    // The one platform call the SDK makes before talking to a sandbox.
    const http = await import('node:http');
    const platform = http.createServer((req, res) => {
      req.resume();
      const body = JSON.stringify({ sandboxID, templateID: 'base', envdVersion: ENVD_VERSION, envdAccessToken: token });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    await new Promise<void>((r) => platform.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => platform.close(() => r())));
    const { Sandbox } = await import('e2b');
    const sbx = await Sandbox.connect(sandboxID, {
      apiUrl: `http://127.0.0.1:${(platform.address() as { port: number }).port}`,
      sandboxUrl: gatewayUrl,
      apiKey: 'bench',
    });

    log(`round trips: ${runs} x commands.run('true') through the gateway, and the local floor`);
    await timeEach(10, () => sbx.commands.run('true'));
    await timeEach(10, () => spawnOnce('/bin/true', []));
    const sdkRun = summary(await timeEach(runs, () => sbx.commands.run('true')));
    const floorTrue = summary(await timeEach(runs, () => spawnOnce('/bin/true', [])));
    const floorBash = summary(await timeEach(runs, () => spawnOnce('/bin/bash', ['-l', '-c', 'true'])));

    const sdkBytes = Math.min(bytes, 256 * 1024 * 1024);
    log(`stdout throughput: a process writing ${sdkBytes} bytes, received by the SDK`);
    let received = 0;
    const t0 = process.hrtime.bigint();
    await sbx.commands.run(`head -c ${sdkBytes} /dev/zero`, { timeoutMs: 0, onStdout: (s: string) => void (received += s.length) });
    const stdoutSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (received !== sdkBytes) throw new Error(`the SDK received ${received} of ${sdkBytes} bytes`);

    log(`stdout throughput: the same stream read raw from the agent (framing counted, not decoded)`);
    const raw = await rawStream(agentUrl, token, bytes);

    log(`files: ${values.gib} GiB upload and download with curl, agent (direct and through the gateway) and nginx`);
    const nginxPort = await freePort();
    const nginx = await startNginxFiles(path.join(work, 'nginx'), nginxPort);
    children.push(nginx);
    const source = path.join(work, 'source.bin');
    const fd = fs.openSync(source, 'w');
    spawnSync('head', ['-c', String(bytes), '/dev/urandom'], { stdio: ['ignore', fd, 'inherit'] });
    fs.closeSync(fd);
    fs.copyFileSync(source, path.join(work, 'nginx/www/file.bin'));
    const tokenHeader = ['-H', `X-Access-Token: ${token}`];
    const routeHeaders = ['-H', `E2b-Sandbox-Id: ${sandboxID}`, '-H', `E2b-Sandbox-Port: ${DEFAULT_AGENT_PORT}`];
    const nginxDown = await curl([`http://127.0.0.1:${nginxPort}/file.bin`]);
    const nginxUp = await curl([
      '-X',
      'POST',
      '-H',
      'Content-Type: application/octet-stream',
      '-T',
      source,
      `http://127.0.0.1:${nginxPort}/upload`,
    ]);
    const agentUp = await curl([
      ...tokenHeader,
      '-X',
      'POST',
      '-H',
      'Content-Type: application/octet-stream',
      '-T',
      source,
      `${agentUrl}/files?path=${work}/uploaded.bin`,
    ]);
    const agentDown = await curl([...tokenHeader, `${agentUrl}/files?path=${source}`]);
    const gwUp = await curl([
      ...tokenHeader,
      ...routeHeaders,
      '-X',
      'POST',
      '-H',
      'Content-Type: application/octet-stream',
      '-T',
      source,
      `${gatewayUrl}/files?path=${work}/uploaded2.bin`,
    ]);
    const gwDown = await curl([...tokenHeader, ...routeHeaders, `${gatewayUrl}/files?path=${source}`]);
    const peakRss = status(agent.pid!, 'VmHWM');

    const result = {
      roundTripMs: { sdkThroughGateway: sdkRun, spawnTrue: floorTrue, spawnBashLogin: floorBash },
      roundTripRatio: {
        vsSpawnTrueP50: +(sdkRun.p50 / floorTrue.p50).toFixed(2),
        vsBashLoginP50: +(sdkRun.p50 / floorBash.p50).toFixed(2),
      },
      stdoutToSdkMBps: mbps(sdkBytes, stdoutSeconds),
      stdoutRawFromAgentMBps: mbps(bytes, raw),
      nginxDownloadMBps: mbps(nginxDown.bytes, nginxDown.seconds),
      stdoutSdkVsNginxDownload: +(mbps(sdkBytes, stdoutSeconds) / mbps(nginxDown.bytes, nginxDown.seconds)).toFixed(2),
      stdoutRawVsNginxDownload: +(mbps(bytes, raw) / mbps(nginxDown.bytes, nginxDown.seconds)).toFixed(2),
      filesMBps: {
        agentDownload: mbps(agentDown.bytes, agentDown.seconds),
        agentUpload: mbps(agentUp.bytes, agentUp.seconds),
        gatewayDownload: mbps(gwDown.bytes, gwDown.seconds),
        gatewayUpload: mbps(gwUp.bytes, gwUp.seconds),
        nginxDownload: mbps(nginxDown.bytes, nginxDown.seconds),
        nginxUpload: mbps(nginxUp.bytes, nginxUp.seconds),
      },
      filesRatio: {
        downloadAgentVsNginx: +(mbps(agentDown.bytes, agentDown.seconds) / mbps(nginxDown.bytes, nginxDown.seconds)).toFixed(2),
        uploadAgentVsNginx: +(mbps(agentUp.bytes, agentUp.seconds) / mbps(nginxUp.bytes, nginxUp.seconds)).toFixed(2),
      },
      agentRssMiB: { idle: +(idleRss / 1048576).toFixed(1), peak: +(peakRss / 1048576).toFixed(1) },
      crunExec: 'measured with --sandbox (a real crun sandbox)',
    };
    console.log(JSON.stringify(result, null, 2));
    if (values.json) fs.writeFileSync(values.json, JSON.stringify(result, null, 2));
  } finally {
    for (const c of closers.reverse()) await c().catch(() => {});
    for (const c of children) c.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`agent-process: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
