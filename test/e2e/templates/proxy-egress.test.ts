/**
 * Both proxy templates, end to end in the lab: `sandbox-kit template build` builds each through the platform's API,
 * the unmodified SDK creates a sandbox from it on the lab's sandbox network, and from inside the sandbox the
 * internet sees the proxy's egress address: through the SOCKS5 proxy at 127.0.0.1:1080 in local mode, with a plain
 * request in transparent mode. Also the sample template of the SDK test: the copied file, the package and the env,
 * read through the SDK's filesystem and process services. The lab has a host link, one per machine: npm test runs the e2e files one at a time.
 * The platform knows both as the stack's proxy templates, so their sandboxes leave only through the proxy: root in
 * one flushing its NAT chain and calling curl --noproxy '*' gets no route out, never the sandbox host's address.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { labUp, type Lab } from '../../../src/lab';
import { startPlatformOnHost, type PlatformOnHost } from '../../../src/platform/on-host';
import { BridgeNetwork } from '../../../src/runtime';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { namespacesOf, requireBuilt, uniqueLabName } from '../../helpers/lab';
import { runEntry, runScript } from '../../helpers/node-script';
import { sdkBuild, succeeded } from '../../integration/platform/templates/helpers/sdk-run';
import type { ClientMode } from '../../../src/config';
import { CLI_SOURCE } from '../../helpers/cli';
import { loadStackConfig } from '../../../src/config';

jest.setTimeout(900_000);

const ROOT = join(__dirname, '..', '..', '..');
/** Short, so the never-ready build fails quickly; the templates here are ready in well under a second. */
const READY_TIMEOUT_MS = 15_000;
/** The lab's own addresses (the platform's host link, the sandbox network). */

interface Stack {
  lab: Lab;
  work: string;
  platform?: PlatformOnHost;
  gateway?: RunningGateway;
}

/** Brings the lab, the platform on its sandbox network and the gateway up; what came up is in `s` even on failure. */
async function up(s: Partial<Stack>, mode: ClientMode): Promise<void> {
  s.lab = await labUp({ name: uniqueLabName('tp'), mode, hostLink: true });
  s.work = await mkdtemp(join(tmpdir(), 'sk-templates-e2e-'));
  const lab = s.lab;
  // Sandboxes join the lab's sandbox network beside its own sandbox namespaces, whose addresses stay theirs.
  const network = new BridgeNetwork({
    bridgeNamespace: lab.namespace('sbhost'),
    bridge: 'sb',
    subnet: lab.plan.sandboxSubnet,
    gateway: lab.plan.sandboxGateway,
    netnsPrefix: `${lab.name}-p-`,
    reserved: lab.sandboxes.map((node) => lab.sandboxAddress(node)),
  });
  s.platform = await startPlatformOnHost({
    stateDir: join(s.work, 'platform'),
    network,
    readyTimeoutMs: READY_TIMEOUT_MS,
    // As `sandbox-kit up` does: the proxy templates' sandboxes reach the proxy's ingress address and port only.
    stackEgress: { templates: [`proxy-${mode}`], proxy: [{ address: lab.ingressEip, port: loadStackConfig({}).proxy.port }] },
    log: (line) => process.stderr.write(`platform: ${line}\n`),
  });
  s.gateway = await startGateway({ catalog: s.platform.catalog });
}

async function down(s: Partial<Stack>): Promise<void> {
  await s.gateway?.close();
  await s.platform?.close({ killSandboxes: true });
  if (s.lab) {
    const name = s.lab.name;
    await s.lab.down();
    expect(await namespacesOf(name)).toEqual([]);
  }
  if (s.work) await rm(s.work, { recursive: true, force: true });
}

async function inSandbox(s: Required<Stack>, template: string, commands: string[], files: string[] = []) {
  let result: Record<string, unknown> | undefined;
  const run = await runScript(
    join(ROOT, 'test', 'integration', 'platform', 'templates', 'helpers', 'sdk-sandbox.ts'),
    { apiUrl: s.platform.url, apiKey: s.platform.apiKey, sandboxUrl: `http://127.0.0.1:${s.gateway.port}`, template, commands, files },
    (m) => (result = m),
  );
  if (run.code !== 0 || result?.t !== 'done') throw new Error(`sandbox client: ${JSON.stringify(result)} ${run.stderr}`);
  return result as { commands: Array<{ exitCode: number; stdout: string; stderr: string }>; files: Record<string, string> };
}

describe.each(['local', 'transparent'] as const)('%s mode', (mode) => {
  const s: Partial<Stack> = {};
  beforeAll(async () => {
    requireBuilt();
    for (const entry of bundleEntries()) await bundle(entry);
    await up(s, mode);
  });
  afterAll(() => down(s));

  test('the proxy template builds through the platform and its sandbox egresses through the proxy', async () => {
    const stack = s as Required<Stack>;
    const keyFile = join(stack.work, 'api-key');
    await writeFile(keyFile, stack.platform.apiKey);
    await chmod(keyFile, 0o600);
    const password = (await readFile(stack.lab.snapshot.passwordFile, 'utf8')).trim();
    const alias = `proxy-${mode}`;
    const lines: string[] = [];
    // A stack of the test's own, with nothing bypassed beyond the defaults: in transparent mode the NAT chain itself
    // must leave the platform's open connection to the agent alone.
    const project = await mkdtemp(join(stack.work, 'project-'));
    await writeFile(join(project, 'Pulumi.yaml'), 'name: sandbox-kit-e2e\nruntime: nodejs\n');
    await writeFile(join(project, 'Pulumi.e2e.yaml'), 'config: {}\n');
    const built = await runEntry(CLI_SOURCE, {
      cwd: project,
      args: [
        'template',
        'build',
        '--stack',
        'e2e',
        '--mode',
        mode,
        '--server-ip',
        stack.lab.ingressEip,
        '--api-url',
        stack.platform.url,
        '--api-key-file',
        keyFile,
        '--alias',
        alias,
      ],
      env: { SANDBOX_KIT_PROXY_PASSWORD: password },
      onLine: (l) => lines.push(l),
    });
    if (built.code !== 0) throw new Error(`template build failed: ${built.stderr}\n${lines.slice(-30).join('\n')}`);
    // On the platform, the build's finalize check is a real sandbox started from the new build (then killed).
    expect(
      lines.some((l) =>
        / INFO {2}sandbox [a-z0-9]+ started from the new build: the start command ran and the ready command succeeded$/.test(l),
      ),
    ).toBe(true);

    const web = `http://${stack.lab.plan.web}/`;
    const command = mode === 'local' ? `curl -sS --max-time 10 --socks5-hostname 127.0.0.1:1080 ${web}` : `curl -sS --max-time 10 ${web}`;
    // Then root tries to get around the proxy: the NAT chain flushed (transparent mode's redirect), no proxy asked;
    // then a plain request after the flush.
    const bypass = `iptables -t nat -F 2>/dev/null; curl -sS --max-time 5 --noproxy '*' ${web}`;
    const seen = await inSandbox(stack, alias, [command, bypass, `curl -sS --max-time 5 http://${stack.lab.plan.web}/`]);
    expect(seen.commands[0]).toMatchObject({ exitCode: 0 });
    expect(seen.commands[0]!.stdout.trim()).toBe(stack.lab.egressEip);
    for (const attempt of seen.commands.slice(1)) {
      // No route out (curl fails) or, at most, still the egress address; never the sandbox host's own.
      expect(attempt.stdout).not.toContain(stack.lab.plan.sandboxHostPublic);
      if (attempt.exitCode === 0) expect(attempt.stdout.trim()).toBe(stack.lab.egressEip);
    }
    expect(seen.commands[1]!.exitCode).not.toBe(0);
    // Its egress is fixed: rules for it are refused, naming why.
    const ruled = await fetch(`${stack.platform.url}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'X-API-Key': stack.platform.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ templateID: alias, network: { allowOut: ['1.1.1.1'] } }),
    });
    expect(ruled.status).toBe(400);
    expect(((await ruled.json()) as { message: string }).message).toContain("stack's proxy");
  });

  if (mode === 'local') {
    test('a build whose ready command never succeeds fails its sandbox check, leaving no sandbox and no ready build', async () => {
      const stack = s as Required<Stack>;
      const context = await mkdtemp(join(stack.work, 'ctx-'));
      const built = await sdkBuild(stack.platform.url, 'neverReady', 'never-ready', context, undefined, false, stack.platform.apiKey);
      expect(built.error?.name).toBe('BuildError');
      // The platform's own words follow: its ready-command timeout.
      expect(built.error?.message).toMatch(/^a sandbox from the new build did not become ready: /);
      const listed = await fetch(`${stack.platform.url}/v2/sandboxes`, { headers: { 'X-API-Key': stack.platform.apiKey } });
      expect(await listed.json()).toEqual([]);
      const create = await fetch(`${stack.platform.url}/v2/sandboxes`, {
        method: 'POST',
        headers: { 'X-API-Key': stack.platform.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ templateID: 'never-ready' }),
      });
      expect(create.status).toBe(404);
    });

    test('a template built with the SDK: its sandbox has the copied file, the package, the env and the template limits', async () => {
      const stack = s as Required<Stack>;
      const context = await mkdtemp(join(stack.work, 'ctx-'));
      await writeFile(join(context, 'hello.txt'), 'hello from the build context\n');
      const built = await sdkBuild(stack.platform.url, 'sample', 'sdk-sample', context, undefined, false, stack.platform.apiKey);
      succeeded(built);
      // The template's memoryMB (1024) and cpuCount (1) are the sandbox's cgroup limits, as the sandbox sees them.
      const limits =
        'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"';
      const seen = await inSandbox(
        stack,
        'sdk-sample',
        ['jq --version', 'echo "$GREETING|$APP_HOME"; pwd; whoami', 'stat -c "%a %U" /app/hello.txt', limits],
        ['/app/hello.txt'],
      );
      expect(seen.files['/app/hello.txt']).toBe('hello from the build context\n');
      expect(seen.commands.map((c) => c.exitCode)).toEqual([0, 0, 0, 0]);
      expect(seen.commands[3]!.stdout).toBe(`${1024 * 1024 * 1024}\n100000 100000\n`);
      expect(seen.commands[0]!.stdout).toMatch(/^jq-1\./);
      expect(seen.commands[1]!.stdout).toBe('hi there|/app\n/app\nuser\n');
      expect(seen.commands[2]!.stdout).toBe('640 user\n');
    });
  }
});
