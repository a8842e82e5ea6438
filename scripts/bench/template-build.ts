/**
 * Template build benchmark: the local-mode proxy template built through the platform's template API with the
 * unmodified E2B SDK (`Template.build`, as `sandbox-kit template build` does), cold (empty layer cache) and cached
 * (the same definition again), beside the same steps done by hand in the same run as the peer: the same mmdebstrap
 * base, an overlay, `chroot` for the apt install, `install` for the two files, and the start script run once in a
 * network namespace of its own until 1080 listens (what the build's finalize check does). There is no podman here;
 * mmdebstrap + chroot is the peer. The peer has no cache, so its time stands beside both of ours.
 *
 * The base root filesystem is made (or found in the cache) first, outside the timings: both sides start from it.
 * Rounds alternate which side goes first (the Debian mirror's caches warm for both).
 *
 *   node dist/scripts/bench/template-build.js [--rounds 3] [--json FILE]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { buildProxyTemplate, writeProxyContext } from '../../templates/proxy';
import { loadStackConfig } from '../../src/config';
import { ApiKeys } from '../../src/platform/teams/api-keys';
import { startApiServer } from '../../src/platform/http/server';
import { createTemplateService, templateRoutes } from '../../src/platform/templates';
import { SANDBOX_DIR } from '../../src/render';
import { cleanupLeftovers, createStepExecutor, MmdebstrapImages } from '../../src/runtime';
import { freePort } from '../../test/helpers/free-port';

const SERVER_IP = '203.0.113.10';
const PASSWORD = 'bench-password-0123456789abcdef';
const API_KEY = `bench-${randomBytes(8).toString('hex')}`;

function log(msg: string): void {
  process.stderr.write(`template-build: ${msg}\n`);
}

async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server not ready: ${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout!.resume();
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, child };
}

/** The peer: the template's steps by hand over the same base, in private mount and PID namespaces. */
const PEER_SCRIPT = `set -eu
base=$1; ctx=$2; dir=$3
mkdir -p "$dir/upper" "$dir/work" "$dir/mnt"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$dir/upper,workdir=$dir/work" "$dir/mnt"
mount -t proc proc "$dir/mnt/proc"
mount --rbind /dev "$dir/mnt/dev"
mount --bind -o ro /etc/resolv.conf "$dir/mnt/etc/resolv.conf"
chroot "$dir/mnt" /bin/bash -c 'apt-get update && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y --no-install-recommends shadowsocks-libev iproute2' >/dev/null
install -D -m 0600 -o root -g root "$ctx/client-local.json" "$dir/mnt${SANDBOX_DIR}/client-local.json"
install -D -m 0755 -o root -g root "$ctx/client-start-local.sh" "$dir/mnt${SANDBOX_DIR}/client-start-local.sh"
unshare --net chroot "$dir/mnt" /bin/bash -c 'ip link set lo up; ${SANDBOX_DIR}/client-start-local.sh && [ -n "$(ss -Htuln sport = :1080)" ]' >/dev/null
`;

function runPeer(base: string, ctx: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'unshare',
      ['--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', 'bash', '-c', PEER_SCRIPT, 'peer', base, ctx, dir],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`peer failed (${code}): ${err.slice(-2000)}`))));
  });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, json: { type: 'string' } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20)
    throw new Error(`--rounds: expected an integer from 1 to 20, got ${JSON.stringify(values.rounds)}`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-bench-template-'));
  const runtime = {
    instance: `b${randomBytes(4).toString('hex')}`,
    stateRoot: path.join(work, 'runtime-state'),
    dataRoot: path.join(work, 'runtime-data'),
  };
  const redisServer = await startRedis(work);
  const redis = new Redis(redisServer.url);
  const config = loadStackConfig({});
  const bases = new MmdebstrapImages();
  const executor = createStepExecutor(runtime);
  const apiServer = { close: async () => undefined } as { url?: string; close(): Promise<void> };
  const services: Array<{ close(): Promise<void> }> = [];
  try {
    log('base root filesystem (made once, cached; not timed)');
    const base = await bases.rootfs('debian:bookworm', (line) => log(`  ${line}`));
    const ctx = path.join(work, 'context');
    fs.mkdirSync(ctx, { mode: 0o700 });
    await writeProxyContext(ctx, config, { serverIp: SERVER_IP, password: PASSWORD }, 'local');

    // One API server; each cold round gets a fresh template service (own data dir, own Redis prefix: empty cache).
    let current: Awaited<ReturnType<typeof createTemplateService>> | undefined;
    const routesOf = () => templateRoutes(current!);
    const newService = async (round: number) => {
      const dataDir = path.join(work, `service-${round}`);
      current = await createTemplateService({ redis, executor, baseImages: bases, dataDir, keyPrefix: `bench${round}:` });
      services.push(current);
      return current;
    };
    await newService(0);
    // Route handlers look the current service up per call, so one server serves every round.
    const routes = templateRoutes(current!).map((r) => ({
      ...r,
      handler: (req: Parameters<typeof r.handler>[0]) =>
        routesOf()
          .find((x) => x.method === r.method && x.path === r.path)!
          .handler(req),
    }));
    const server = await startApiServer({ routes, apiKeys: ApiKeys.fromKeys([API_KEY]) });
    apiServer.url = server.url;
    apiServer.close = server.close;

    const build = (alias: string) =>
      buildProxyTemplate({
        config,
        target: { serverIp: SERVER_IP, password: PASSWORD },
        mode: 'local',
        alias,
        apiUrl: server.url,
        apiKey: API_KEY,
      });
    const cold: number[] = [];
    const cached: number[] = [];
    const peer: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      await newService(round);
      const ours = async () => {
        cold.push(await timed(() => build('bench-proxy')));
        cached.push(await timed(() => build('bench-proxy')));
      };
      const theirs = async () => {
        const dir = path.join(work, `peer-${round}`);
        peer.push(await timed(() => runPeer(base, ctx, dir)));
        fs.rmSync(dir, { recursive: true, force: true });
      };
      if (round % 2 === 1) {
        await ours();
        await theirs();
      } else {
        await theirs();
        await ours();
      }
      log(
        `round ${round}/${rounds}: cold ${cold.at(-1)!.toFixed(2)} s, cached ${cached.at(-1)!.toFixed(2)} s, peer ${peer.at(-1)!.toFixed(2)} s`,
      );
    }

    const result = {
      rounds,
      template: 'proxy (local mode): apt shadowsocks-libev + iproute2, 2 files, start + ready on 1080',
      coldSeconds: median(cold),
      cachedSeconds: median(cached),
      peerSeconds: median(peer),
      coldOverPeer: median(cold) / median(peer),
      cachedOverPeer: median(cached) / median(peer),
      goals: { cachedSeconds: 2, coldOverPeer: 1.2 },
      samples: { cold, cached, peer },
    };
    console.log('template build (median of %d rounds)', rounds);
    console.log(`  kit, cold (empty layer cache)     ${result.coldSeconds.toFixed(2)} s`);
    console.log(
      `  kit, cached rebuild               ${result.cachedSeconds.toFixed(2)} s   goal <= 2 s: ${result.cachedSeconds <= 2 ? 'met' : 'NOT met'}`,
    );
    console.log(`  peer, mmdebstrap base + chroot    ${result.peerSeconds.toFixed(2)} s`);
    console.log(
      `  cold / peer                       ${result.coldOverPeer.toFixed(2)}x  goal <= 1.2x: ${result.coldOverPeer <= 1.2 ? 'met' : 'NOT met'}`,
    );
    console.log(`  cached / peer                     ${result.cachedOverPeer.toFixed(2)}x`);
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    for (const s of services) await s.close();
    await apiServer.close();
    redis.disconnect();
    redisServer.child.kill('SIGTERM');
    await cleanupLeftovers(runtime);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`template-build: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
