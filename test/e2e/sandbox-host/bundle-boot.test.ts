import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { loadStackConfig } from '../../../src/config';
import { labScript } from '../../../src/lab/dist-path';
import { SANDBOX_HOST_PATHS as P, SANDBOX_UNITS } from '../../../src/render';
import { formatResult, runSandboxHostChecks, sandboxExpectationsFor, type Remote } from '../../../src/verify';
import { bundleSums, layOutSandboxHost } from '../../helpers/sandbox-host-layout';

/**
 * The release bundle booted exactly as a sandbox host's cloud-init lays it out: the same files at the same paths
 * (/etc/sandbox-kit, /opt/sandbox-kit, /var/lib/sandbox-kit seen through overlays in a private mount namespace),
 * the rendered units run by the lab's supervisor, in a network namespace of this test's own. Then `verify`'s sandbox
 * host checks run against it. Template and sandbox need the Debian mirror inside the namespace, which this test does
 * not give it: those two checks must fail with their reasons, the others pass.
 */
const tag = randomBytes(3).toString('hex');
const NS = `skt-boot-${tag}`;

function sh(args: string[], input?: string) {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', input, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

describe('the sandbox host bundle, booted as cloud-init lays it out', () => {
  let dir: string;
  let varUpper: string;
  const pids: number[] = [];
  let inHost: (argv: string[]) => string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-boot-'));
    const bundleDir = join(dir, 'bundle');
    for (const entry of bundleEntries()) await bundle(entry, bundleDir);
    const config = loadStackConfig({});
    const layout = layOutSandboxHost(
      join(dir, 'node'),
      config,
      {
        role: 'single',
        apiKey: `e2b_${randomBytes(20).toString('hex')}`,
        bundle: { bucket: 'unused', key: 'unused', region: 'unused', sums: bundleSums(bundleDir) },
        proxyIngressIp: '203.0.113.10',
        hostNetworks: [],
      },
      bundleDir,
    );
    varUpper = join(dir, 'var-upper');
    mkdirSync(join(varUpper, 'upper', 'sandbox-kit'), { recursive: true });
    mkdirSync(join(varUpper, 'work'), { recursive: true });
    const mounts = [
      `mount -t overlay skt-etc -o lowerdir=${layout.etcLayer}:/etc /etc`,
      `mount -t overlay skt-opt -o lowerdir=${layout.optLayer}:/opt /opt`,
      `mount -t overlay skt-var -o lowerdir=/var/lib,upperdir=${varUpper}/upper,workdir=${varUpper}/work /var/lib`,
    ].join(' && ');
    inHost = (argv) => ['ip', 'netns', 'exec', NS, 'sh', '-c', `${mounts} && exec "$@"`, 'sh', ...argv];
    expect(sh(['ip', 'netns', 'add', NS]).code).toBe(0);
    sh(['ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']);
    const start = (argv: string[], log: string) => {
      const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', 'ignore', 'ignore'] });
      child.unref();
      pids.push(child.pid!);
      void log;
    };
    // Debian's redis-server unit, on loopback as the package configures it.
    start(inHost(['redis-server', '--port', '6379', '--bind', '127.0.0.1', '--save', '', '--dir', join(dir, 'node')]), 'redis');
    const supervise = (unit: string) =>
      start(inHost([process.execPath, labScript('supervisor'), `${P.units}/${unit}`, '--status', join(dir, `${unit}.json`)]), unit);
    supervise(SANDBOX_UNITS.network);
    supervise(SANDBOX_UNITS.platform);
    supervise(SANDBOX_UNITS.gateway);
    // The platform answers once it has opened its state and its sandbox network.
    let ready = false;
    for (let i = 0; i < 120; i++) {
      // What build-template.sh waits for: the API answering an authenticated request.
      const up = sh(
        inHost([
          'sh',
          '-c',
          `curl -fsS -o /dev/null -H "X-API-Key: $(cat ${P.apiKey})" http://127.0.0.1:${config.sandboxHost.apiPort}/templates`,
        ]),
      );
      const gw = sh(['ip', 'netns', 'exec', NS, 'ss', '-Hltn', `sport = :${config.gateway.port}`]);
      if (up.code === 0 && gw.stdout.trim() !== '') {
        ready = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    if (!ready) throw new Error('the platform API or the gateway did not come up within 60 s');
  }, 180_000);

  afterAll(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    spawnSync('sleep', ['2']);
    for (const pid of pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // The platform's own sandbox network: its namespace is named after the instance in the state dir.
    const instanceFile = join(varUpper, 'upper', 'sandbox-kit', 'platform', 'instance');
    if (existsSync(instanceFile)) spawnSync('ip', ['netns', 'del', `${readFileSync(instanceFile, 'utf8').trim()}.host`]);
    spawnSync('ip', ['netns', 'del', NS]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the services from the units, with the bundle, key and runtime as verify expects them', async () => {
    const remote: Remote = {
      async exec(command) {
        const r = spawnSync(inHost(['sh', '-c', command])[0]!, inHost(['sh', '-c', command]).slice(1), {
          encoding: 'utf8',
          timeout: 60_000,
        });
        return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', code: r.status };
      },
    };
    const results = await runSandboxHostChecks(remote, sandboxExpectationsFor(loadStackConfig({}), {}));
    const lines = results.map(formatResult);
    const passed = (prefix: string) => expect(lines.find((l) => l.startsWith(`PASS ${prefix}`))).toBeDefined();
    for (const prefix of [
      `${SANDBOX_UNITS.redis} active`,
      `${SANDBOX_UNITS.platform} active`,
      `${SANDBOX_UNITS.gateway} active`,
      'release bundle intact',
      'API key file mode 0600',
      'OCI runtime',
    ]) {
      passed(prefix);
    }
    // No template was built here (no Debian mirror in this namespace): verify says so, and creating a sandbox fails.
    expect(lines).toContainEqual(
      expect.stringMatching(/^FAIL template sandbox-kit-proxy present: the API lists \d+ templates, none named sandbox-kit-proxy/),
    );
    expect(lines.at(-1)).toMatch(/^FAIL a sandbox reaches the internet through the proxy: creating a sandbox failed: 404 /);
  }, 120_000);
});
