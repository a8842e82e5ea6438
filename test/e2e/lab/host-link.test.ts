/**
 * Everything that uses the lab's host link (its one veth into the root namespace) lives in this file, so jest never
 * runs two host links at once: the lab's host link itself, and `sandbox-kit up|status|rotate|down`, the whole local
 * system, which puts the gateway in the root namespace in front of agents inside the sandboxes.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { dirname } from 'node:path';
import { attachLab, hostLinkName, type Lab, labUp } from '../../../src/lab';
import type { LocalStatus, RecreateReport, RotationReport, UpJson } from '../../../src/local';
import { runCommand } from '../../../src/local/gateway-checks';
import { platformStateDir } from '../../../src/local/state';
import { run } from '../../../src/lab/run';
import { cli, namespacesOf, requireBuilt, uniqueLabName, waitUntil } from '../../helpers/lab';
import { CLI } from '../../helpers/cli';

jest.setTimeout(240_000);
beforeAll(() => requireBuilt());

describe('host link', () => {
  const name = uniqueLabName('hst');
  let lab: Lab | undefined;

  afterAll(async () => {
    await lab?.down();
    expect(await namespacesOf(name)).toEqual([]);
    expect((await run(['ip', 'link', 'show', 'dev', hostLinkName(name)])).code).not.toBe(0);
  });

  test('with hostLink, the root namespace reaches a service in a sandbox through one veth; down removes it', async () => {
    lab = await labUp({ name, hostLink: true });
    const device = hostLinkName(name);
    expect((await run(['ip', 'link', 'show', 'dev', device])).code).toBe(0);
    const server = lab.spawnIn('sb1', [
      'node',
      '-e',
      'require("http").createServer((q,s)=>s.end(q.socket.remoteAddress+"\\n")).listen(18081,"0.0.0.0")',
    ]);
    try {
      const url = `http://${lab.sandboxAddress('sb1')}:18081/`;
      let answer = '';
      for (let i = 0; i < 50 && answer === ''; i++) {
        const r = await run(['curl', '-sS', '--max-time', '2', url]);
        if (r.code === 0) answer = r.stdout.trim();
        else await new Promise((res) => setTimeout(res, 100));
      }
      expect(answer).toBe(lab.plan.hostLinkRoot);
    } finally {
      server.kill();
    }
    await lab.down();
    lab = undefined;
    expect((await run(['ip', 'link', 'show', 'dev', device])).code).not.toBe(0);
    expect((await run(['ip', 'route', 'show', '198.18.2.0/24'])).stdout.trim()).toBe('');
  });
});

interface Answer {
  status: number;
  body: string;
}

function post(url: string, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The platform instance of the local system `name` (it names the platform's containers and cgroups). */
const instances = new Map<string, string>();
function rememberInstance(name: string): void {
  const file = `${platformStateDir(name)}/instance`;
  if (existsSync(file)) instances.set(name, readFileSync(file, 'utf8').trim());
}

/** Every trace the local system `name` could leave: namespaces, host link, state dirs, processes, mounts, cgroups. */
async function tracesOf(name: string): Promise<string[]> {
  const traces = (await namespacesOf(name)).map((n) => `namespace ${n}`);
  if ((await run(['ip', 'link', 'show', 'dev', hostLinkName(name)])).code === 0) traces.push('host link');
  for (const dir of [`/run/sandbox-kit/local/${name}`, `/run/sandbox-kit/labs/${name}`, dirname(platformStateDir(name))])
    if (existsSync(dir)) traces.push(dir);
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n'))
    if (line.includes(`/sandbox-kit/local/${name}/`)) traces.push(`mount ${line}`);
  const instance = instances.get(name);
  if (instance) {
    const cgroups = await run(['find', '/sys/fs/cgroup', '-maxdepth', '4', '-name', `*${instance}*`]);
    for (const line of cgroups.stdout.split('\n').filter((l) => l !== '')) traces.push(`cgroup ${line}`);
    const ps = await run(['ps', '-eo', 'pid=,args=']);
    for (const line of ps.stdout.split('\n')) if (line.includes(instance)) traces.push(`process ${line.trim()}`);
  }
  const ps = await run(['ps', '-eo', 'pid=,args=']);
  for (const line of ps.stdout.split('\n'))
    if (line.includes(`/${name}/`) || line.includes(`sk-${name}-`)) traces.push(`process ${line.trim()}`);
  return traces;
}

describe('sandbox-kit up | status | rotate | down: the whole local system', () => {
  const name = uniqueLabName('up');

  afterAll(async () => {
    await cli(['down', '--name', name, '--purge']);
    expect(await tracesOf(name)).toEqual([]);
  });

  test('without root, up says what it cannot do and changes nothing', async () => {
    const result = await run(
      ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, CLI, 'up', '--name', name],
      {
        timeoutMs: 60_000,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nothing was changed');
    expect(result.stderr).toContain('needs root');
    expect(await tracesOf(name)).toEqual([]);
  });

  test('bad flags are a usage error, refused before anything is built', async () => {
    const bad = await cli(['up', '--name', name, '--mode', 'socks', '--sandboxes', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--mode: got "socks"; expected one of local, transparent');
    expect(bad.stderr).toContain('--sandboxes: got "0"; expected an integer from 1 to 200');
    expect(await tracesOf(name)).toEqual([]);
  });

  test('up --json, checked against the running system; status; rotate under load; a warm up; rotate --recreate; down leaves nothing', async () => {
    // The background template builds have their own test (test/e2e/templates); here they would only compete for CPU.
    const up = await cli(['up', '--name', name, '--gateway-port', '0', '--sandboxes', '2', '--no-templates', '--json'], 120_000);
    expect({ code: up.code, stderr: up.code === 0 ? '' : up.stderr }).toEqual({ code: 0, stderr: '' });
    // Progress goes to stderr, step by step with timings; stdout is one JSON line.
    for (const step of ['preflight', 'lab', 'platform', 'template', 'sandboxes', 'check'])
      expect(up.stderr).toMatch(new RegExp(`^\\[${step}\\] done in \\d+\\.\\d s$`, 'm'));
    expect(up.stdout.trim().split('\n')).toHaveLength(1);
    const info = JSON.parse(up.stdout) as UpJson;
    expect(info).toMatchObject({ name, warm: false, proxy: { mode: 'local', ingressIp: '203.0.113.10' } });
    expect(info.sandboxes).toHaveLength(2);

    // The JSON describes what runs: the platform built the template and made the sandboxes; each answers through the
    // gateway at sandboxUrl and, asked from inside, leaves through the proxy's egress address.
    const lab = attachLab(name);
    expect(info.proxy.egressIp).toBe(lab.egressEip);
    expect(info.template.templateID).toMatch(/^[a-z0-9]+$/);
    expect(statSync(info.tokensFile).mode & 0o777).toBe(0o600);
    const listed = await fetch(`${info.apiUrl}/v2/sandboxes`, { headers: { 'x-api-key': info.apiKey! } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { sandboxID: string }[]).map((s) => s.sandboxID).sort()).toEqual(
      info.sandboxes.map((s) => s.sandboxID).sort(),
    );
    const tokens = JSON.parse(readFileSync(info.tokensFile, 'utf8')) as { sandboxID: string; token: string }[];
    const target = (s: UpJson['sandboxes'][0]) => ({
      gatewayUrl: info.sandboxUrl,
      brand: 'E2b',
      sandboxID: s.sandboxID,
      agentPort: s.agentPort,
      token: tokens.find((t) => t.sandboxID === s.sandboxID)!.token,
    });
    const curl = `curl -sS --max-time 5 --socks5-hostname 127.0.0.1:${lab.socksPort} http://${lab.plan.web}/`;
    for (const s of info.sandboxes) {
      expect(up.stdout + up.stderr).not.toContain(target(s).token);
      expect((await runCommand(target(s), curl)).stdout.trim()).toBe(info.proxy.egressIp);
      const headers = { 'connect-protocol-version': '1', 'e2b-sandbox-id': s.sandboxID, 'x-access-token': target(s).token };
      const home = await post(info.sandboxUrl, '/filesystem.Filesystem/Stat', headers, '{"path":"~"}');
      expect(home.status).toBe(200);
      // Without an Authorization header the agent serves the sandbox's default user (the template's USER): ~ is that
      // user's home, owned by that user.
      const entry = JSON.parse(home.body).entry as { path: string; owner: string; type: string };
      expect(entry.type).toBe('FILE_TYPE_DIRECTORY');
      expect([`/home/${entry.owner}`, '/root']).toContain(entry.path);
    }
    const [first, second] = info.sandboxes as [UpJson['sandboxes'][0], UpJson['sandboxes'][0]];
    const crossed = await post(
      info.sandboxUrl,
      '/filesystem.Filesystem/Stat',
      { 'connect-protocol-version': '1', 'e2b-sandbox-id': first.sandboxID, 'x-access-token': target(second).token },
      '{"path":"/"}',
    );
    expect(crossed.status).toBe(401);

    const status = await cli(['status', '--name', name, '--json']);
    expect(status.code).toBe(0);
    const health = JSON.parse(status.stdout) as LocalStatus;
    expect(health).toMatchObject({
      up: true,
      healthy: true,
      problems: [],
      platform: { healthy: true },
      gateway: { healthy: true, url: info.sandboxUrl },
    });
    expect(health.sandboxes.map((s) => [s.sandboxID, s.healthy])).toEqual(info.sandboxes.map((s) => [s.sandboxID, true]));

    const rotate = await cli(['rotate', '--name', name, '--json'], 90_000);
    expect({ code: rotate.code, stderr: rotate.code === 0 ? '' : rotate.stderr }).toEqual({ code: 0, stderr: '' });
    const rotation = JSON.parse(rotate.stdout) as RotationReport;
    expect(rotation.oldEgressIp).toBe(info.proxy.egressIp);
    expect(rotation.newEgressIp).not.toBe(rotation.oldEgressIp);
    expect(rotation.probes.failed).toBe(0);
    expect(rotation.probes.sent).toBeGreaterThan(5);
    expect(rotation.secondsToNewAddress).toBeGreaterThanOrEqual(0);
    // The sandboxes now leave through the new address; the ingress address and the sandboxes did not change.
    expect((await runCommand(target(second), curl)).stdout.trim()).toBe(rotation.newEgressIp);
    expect(attachLab(name).ingressEip).toBe(info.proxy.ingressIp);

    const warm = await cli(['up', '--name', name, '--no-templates', '--json'], 60_000);
    expect(warm.code).toBe(0);
    expect(warm.stderr).toContain('[warm]');
    expect(JSON.parse(warm.stdout)).toMatchObject({ warm: true, sandboxes: info.sandboxes, proxy: { egressIp: rotation.newEgressIp } });

    // The destroy-and-recreate path: new proxy host and ingress address, template rebuilt, sandboxes recreated.
    const recreate = await cli(['rotate', '--recreate', '--name', name, '--json'], 180_000);
    expect({ code: recreate.code, stderr: recreate.code === 0 ? '' : recreate.stderr }).toEqual({ code: 0, stderr: '' });
    const recreated = JSON.parse(recreate.stdout) as RecreateReport;
    expect(recreated.oldIngressIp).toBe(info.proxy.ingressIp);
    expect(recreated.newIngressIp).not.toBe(recreated.oldIngressIp);
    expect(recreated.egressIp).toBe(rotation.newEgressIp);
    expect(recreated.sandboxes.before.sort()).toEqual(info.sandboxes.map((s) => s.sandboxID).sort());
    expect(recreated.sandboxes.after).toHaveLength(2);
    for (const id of recreated.sandboxes.after) expect(recreated.sandboxes.before).not.toContain(id);
    const afterRecreate = JSON.parse((await cli(['status', '--name', name, '--json'])).stdout) as LocalStatus;
    expect(afterRecreate).toMatchObject({ healthy: true, proxy: { ingressIp: recreated.newIngressIp, egressIp: rotation.newEgressIp } });
    expect(afterRecreate.sandboxes.map((s) => s.sandboxID).sort()).toEqual([...recreated.sandboxes.after].sort());

    rememberInstance(name);
    const down = await cli(['down', '--name', name, '--purge']);
    expect(down.code).toBe(0);
    expect(down.stdout).toContain('the kept platform state');
    expect(await tracesOf(name)).toEqual([]);
    const again = await cli(['down', '--name', name]);
    expect({ code: again.code, out: again.stdout.trim() }).toEqual({ code: 0, out: `nothing of the local system ${name} was left` });
  });

  test('down after a crash of up removes what it had built', async () => {
    await cli(['down', '--name', name]);
    const child = spawn(process.execPath, [CLI, 'up', '--name', name, '--gateway-port', '0', '--no-templates'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    // Killed once sandboxes exist: lab, platform, gateway, template and sandbox containers; the checks have not passed.
    await waitUntil('up to create a sandbox', () => (/\[sandboxes\] \S+ created/.test(output) ? true : undefined), 120_000);
    rememberInstance(name);
    child.kill('SIGKILL');
    await waitUntil('up to die', () => child.exitCode ?? child.signalCode ?? undefined, 10_000);
    expect(await tracesOf(name)).not.toEqual([]);
    const down = await cli(['down', '--name', name, '--purge']);
    expect(down.code).toBe(0);
    expect(down.stdout).toContain('platform');
    expect(await tracesOf(name)).toEqual([]);
  });
});

describe("sandbox-kit up --sandboxes-from lab: agents in the lab's own sandbox namespaces, no platform", () => {
  const name = uniqueLabName('upl');

  afterAll(async () => {
    await cli(['down', '--name', name]);
    expect(await tracesOf(name)).toEqual([]);
  });

  test('up answers through the gateway from an agent in each sandbox, leaving by the proxy; status is healthy; down leaves nothing', async () => {
    const up = await cli(['up', '--name', name, '--sandboxes-from', 'lab', '--gateway-port', '0', '--sandboxes', '1', '--json'], 120_000);
    expect({ code: up.code, stderr: up.code === 0 ? '' : up.stderr }).toEqual({ code: 0, stderr: '' });
    for (const step of ['preflight', 'lab', 'sandboxes', 'gateway', 'check'])
      expect(up.stderr).toMatch(new RegExp(`^\\[${step}\\] done in \\d+\\.\\d s$`, 'm'));
    expect(up.stderr).not.toMatch(/^\[(platform|template)\]/m);
    const info = JSON.parse(up.stdout) as UpJson;
    expect(info).toMatchObject({ name, warm: false, apiUrl: null, apiKey: null, template: { templateID: null } });
    expect(info.sandboxes).toHaveLength(1);
    const lab = attachLab(name);
    const [sandbox] = info.sandboxes as [UpJson['sandboxes'][0]];
    expect(sandbox.node).toBe(lab.sandboxes[0]);
    expect(sandbox.address).toBe(lab.sandboxAddress(sandbox.node));

    const tokens = JSON.parse(readFileSync(info.tokensFile, 'utf8')) as { sandboxID: string; token: string }[];
    const target = {
      gatewayUrl: info.sandboxUrl,
      brand: 'E2b',
      sandboxID: sandbox.sandboxID,
      agentPort: sandbox.agentPort,
      token: tokens.find((t) => t.sandboxID === sandbox.sandboxID)!.token,
    };
    const curl = `curl -sS --max-time 5 --socks5-hostname 127.0.0.1:${lab.socksPort} http://${lab.plan.web}/`;
    expect((await runCommand(target, curl)).stdout.trim()).toBe(info.proxy.egressIp);
    const wrongToken = await post(
      info.sandboxUrl,
      '/filesystem.Filesystem/Stat',
      { 'connect-protocol-version': '1', 'e2b-sandbox-id': sandbox.sandboxID, 'x-access-token': `${target.token}x` },
      '{"path":"/"}',
    );
    expect(wrongToken.status).toBe(401);

    const status = JSON.parse((await cli(['status', '--name', name, '--json'])).stdout) as LocalStatus;
    expect(status).toMatchObject({ up: true, healthy: true, problems: [], gateway: { healthy: true, url: info.sandboxUrl } });
    expect(status.sandboxes.map((s) => [s.sandboxID, s.healthy])).toEqual([[sandbox.sandboxID, true]]);

    const down = await cli(['down', '--name', name]);
    expect(down.code).toBe(0);
    expect(await tracesOf(name)).toEqual([]);
  });
});
