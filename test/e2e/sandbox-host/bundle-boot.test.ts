import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { labUp, type Lab } from '../../../src/lab';
import { labScript } from '../../../src/lab/dist-path';
import { whoamiUrl } from '../../../src/lab/egress-check';
import { SANDBOX_HOST_PATHS as P, renderStackFile, SANDBOX_UNITS } from '../../../src/render';
import { cleanupLeftovers } from '../../../src/runtime';
import { NETNS_DIR } from '../../../src/runtime/network/in-netns';
import { formatResult, runSandboxHostChecks, sandboxExpectationsFor, type Remote } from '../../../src/verify';
import { startHttpProxy, type RunningHttpProxy } from '../../helpers/http-proxy';
import { requireBuilt, uniqueLabName } from '../../helpers/lab';
import { exec } from '../../../src/util/exec';
import { waitFor } from '../../../src/util/poll';
import { bundleSums, layOutSandboxHost } from '../../helpers/sandbox-host-layout';

/**
 * The release bundle booted exactly as a sandbox host's cloud-init lays it out, on the lab's sandbox host: the same
 * files at the same paths (/etc/sandbox-kit, /opt/sandbox-kit, /var/lib/sandbox-kit seen through overlays in a
 * private mount namespace), the rendered units run by the lab's supervisor (ExecStartPost and EnvironmentFile
 * included) in the lab's `sbhost` namespace, whose uplink reaches the lab's proxy host and internet. The proxy
 * template is built through it with build-template.sh, as `pulumi up` runs it over SSH, and `verify`'s sandbox host
 * checks pass against it, the last two creating a sandbox whose request leaves through the proxy's egress address
 * and one whose root flushes its NAT table and asks directly, which gets no way out (the rendered unit pins the
 * template's sandboxes to the stack's proxy).
 *
 * The lab has no route to the Debian mirror; the one site setting the host gets (platform.env, as an admin behind
 * an HTTP proxy would write it) sends the template build's apt through a forward proxy on the lab's host link.
 * The lab has a host link, one per machine: npm test runs the e2e files one at a time.
 */
jest.setTimeout(900_000);

function sh(args: string[]) {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

describe('the sandbox host bundle, booted as cloud-init lays it out on the lab sandbox host', () => {
  let lab: Lab | undefined;
  let proxy: RunningHttpProxy | undefined;
  let dir: string;
  /** What the services see as /var/lib/sandbox-kit. */
  let stateDir: string;
  const pids: number[] = [];
  let inHost: (argv: string[]) => string[];

  beforeAll(async () => {
    requireBuilt();
    lab = await labUp({ name: uniqueLabName('bb'), hostLink: true });
    proxy = await startHttpProxy(lab.plan.hostLinkRoot);
    dir = mkdtempSync(join(tmpdir(), 'skt-boot-'));
    const bundleDir = join(dir, 'bundle');
    for (const entry of bundleEntries()) await bundle(entry, bundleDir);
    const layout = layOutSandboxHost(
      join(dir, 'node'),
      lab.config,
      {
        role: 'single',
        apiKey: `e2b_${randomBytes(20).toString('hex')}`,
        bundle: { bucket: 'unused', key: 'unused', region: 'unused', sums: bundleSums(bundleDir) },
        proxyIngressIp: lab.ingressEip,
        hostNetworks: [],
      },
      bundleDir,
    );
    writeFileSync(join(layout.etcLayer, P.platformEnv.slice('/etc/'.length)), `# the lab has no route out\nhttp_proxy=${proxy.url}\n`);
    // /var/lib/sandbox-kit is a plain directory, as on a host: template layers are overlay upper dirs, which an
    // overlayfs cannot hold. The /var/lib overlay only makes its mount point.
    const varUpper = join(dir, 'var-upper');
    mkdirSync(join(varUpper, 'upper', 'sandbox-kit'), { recursive: true });
    mkdirSync(join(varUpper, 'work'), { recursive: true });
    stateDir = join(dir, 'var-lib-sandbox-kit');
    mkdirSync(stateDir);
    // /etc is writable as on a host (the template build keeps its input under /etc/sandbox-kit/template).
    const etcUpper = join(dir, 'etc-upper');
    for (const d of ['upper', 'work']) mkdirSync(join(etcUpper, d), { recursive: true });
    const mounts = [
      `mount -t overlay skt-etc -o lowerdir=${layout.etcLayer}:/etc,upperdir=${etcUpper}/upper,workdir=${etcUpper}/work /etc`,
      `mount -t overlay skt-opt -o lowerdir=${layout.optLayer}:/opt /opt`,
      `mount -t overlay skt-var -o lowerdir=/var/lib,upperdir=${varUpper}/upper,workdir=${varUpper}/work /var/lib`,
      `mount --bind ${stateDir} ${P.state}`,
    ].join(' && ');
    // One mount namespace holds the host's view (overlays mount an upper dir once); every process of the host,
    // services and the commands run later alike, enters it and the lab's sandbox host network namespace.
    // (Not `ip netns exec`: it mounts a fresh /sys, without the cgroup file systems the runtime needs.) A slave of the
    // host's mounts, so it holds no copy of another test's sandbox disk after that test unmounted it.
    const netns = `${NETNS_DIR}/${lab.namespace('sbhost')}`;
    const holder = spawn(
      'nsenter',
      [`--net=${netns}`, 'unshare', '-m', '--propagation', 'slave', 'sh', '-c', `${mounts} && exec sleep infinity`],
      {
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let holderErr = '';
    holder.stderr?.on('data', (d: Buffer) => (holderErr += d.toString()));
    pids.push(holder.pid!);
    await waitFor('the host view mounted', () => {
      if (holder.exitCode !== null) throw new Error(`mounting the host view failed: ${holderErr}`);
      return readFileSync(`/proc/${holder.pid}/comm`, 'utf8').trim() === 'sleep' || undefined;
    });
    inHost = (argv) => ['nsenter', '-t', String(holder.pid), '-m', '-n', '--', ...argv];
    const start = (argv: string[], name: string) => {
      const log = openSync(join(dir, `${name}.log`), 'a');
      const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', log, log] });
      closeSync(log);
      child.unref();
      pids.push(child.pid!);
    };
    // What cloud-init runs before the services: the host's Redis password, made here and required from now on.
    const auth = sh(inHost(['sh', P.redisAuth]));
    if (auth.code !== 0) throw new Error(`${P.redisAuth} failed: ${auth.stderr}`);
    // Debian's redis-server unit, on loopback as the package configures it, with the kit's piece of its config.
    start(
      inHost(['redis-server', P.redisConf, '--port', '6379', '--bind', '127.0.0.1', '--save', '', '--dir', join(dir, 'node')]),
      'redis',
    );
    for (const unit of [SANDBOX_UNITS.network, SANDBOX_UNITS.platform, SANDBOX_UNITS.gateway])
      start(inHost([process.execPath, labScript('supervisor'), `${P.units}/${unit}`, '--status', join(dir, `${unit}.json`)]), unit);
  }, 300_000);

  afterAll(async () => {
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
    // The platform leaves its sandboxes running when it stops (a restart finds them): remove what it made here. Its
    // network namespaces were named inside the services' mount namespace, which is gone with them: only the empty
    // name files are left in this one.
    const platformDir = join(stateDir ?? '', P.platformState.slice(P.state.length + 1));
    if (stateDir && existsSync(join(platformDir, 'instance'))) {
      const instance = readFileSync(join(platformDir, 'instance'), 'utf8').trim();
      await cleanupLeftovers({ instance, dataRoot: join(platformDir, 'runtime') });
      for (const name of readdirSync(NETNS_DIR).filter((n) => n === `${instance}.host` || n.startsWith(`${instance}-`))) {
        spawnSync('ip', ['netns', 'del', name]);
        rmSync(join(NETNS_DIR, name), { force: true });
      }
    }
    await proxy?.close();
    await lab?.down();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds the proxy template through the booted platform and passes every verify check', async () => {
    const config = (lab as Lab).config;
    const input = JSON.stringify({
      serverIp: (lab as Lab).ingressEip,
      password: readFileSync((lab as Lab).snapshot.passwordFile, 'utf8').trim(),
      stackFile: renderStackFile(config),
    });
    // The services come up within seconds (the build script would wait 15 minutes, as cloud-init may take that long).
    const apiUp = `curl -fsS -o /dev/null -H "X-API-Key: $(head -n 1 ${P.apiKey})" http://127.0.0.1:${config.sandboxHost.apiPort}/templates`;
    await waitFor('the platform API', () => sh(inHost(['sh', '-c', apiUp])).code === 0 || undefined, {
      timeoutMs: 90_000,
      intervalMs: 500,
      describe: () =>
        readdirSync(dir)
          .filter((f) => f.endsWith('.log'))
          .map((f) => `${f}: ${readFileSync(join(dir, f), 'utf8').slice(-800)}`)
          .join('\n'),
    });
    // What `pulumi up` runs over SSH once the host is up.
    // Not spawnSync: the forward proxy serving its apt runs in this process.
    const build = await exec(inHost(['sh', P.buildTemplate]), { input, timeoutMs: 600_000 });
    const logs = () =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .map((f) => `--- ${f}\n${readFileSync(join(dir, f), 'utf8').slice(-1500)}`)
        .join('\n');
    expect({ code: build.code, stderr: build.code === 0 ? '' : `${build.stderr.slice(-3000)}\n${logs()}` }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(build.stdout).toMatch(/apt-get|Setting up shadowsocks-libev/);
    // Its packages came through the proxy the site settings named (the lab has no other way out).
    expect((proxy as RunningHttpProxy).forwarded()).toBeGreaterThan(0);

    const remote: Remote = {
      async exec(command) {
        const argv = inHost(['sh', '-c', command]);
        const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 120_000 });
        return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', code: r.status };
      },
    };
    const lab_ = lab as Lab;
    const expected = sandboxExpectationsFor(config, {
      egressIp: lab_.egressEip,
      checkUrl: whoamiUrl(lab_.plan.web, lab_.plan.webHttpPort),
    });
    const lines = (await runSandboxHostChecks(remote, expected)).map(formatResult);
    expect(lines.filter((l) => !l.startsWith('PASS'))).toEqual([]);
    for (const prefix of [
      `${SANDBOX_UNITS.redis} active`,
      `${SANDBOX_UNITS.platform} active`,
      `${SANDBOX_UNITS.gateway} active`,
      'release bundle intact',
      'API key file mode 0600',
      'OCI runtime',
      `template ${config.template.alias} present`,
      `a sandbox reaches the internet through the proxy (${lab_.egressEip})`,
      "root in a sandbox, its NAT table flushed, cannot leave past the proxy from the host's address",
    ]) {
      expect(lines.find((l) => l.startsWith(`PASS ${prefix}`))).toBeDefined();
    }
    expect(lines.at(-2)).toContain(`is seen as ${lab_.egressEip}; sandbox removed`);
  });

  it("the host's Redis refuses a client without its password (0600, made at boot); the platform, with it, works", () => {
    const stranger = sh(inHost(['redis-cli', '-p', '6379', 'get', 'anything']));
    expect(`${stranger.stdout}${stranger.stderr}`).toMatch(/NOAUTH/);
    const mode = sh(inHost(['stat', '-c', '%a', P.redisPassword]));
    expect(mode.stdout.trim()).toBe('600');
    const withIt = sh(inHost(['sh', '-c', `REDISCLI_AUTH=$(cat ${P.redisPassword}) redis-cli -p 6379 ping`]));
    expect(withIt.stdout.trim()).toBe('PONG');
  });
});
