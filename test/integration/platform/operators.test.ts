/**
 * What operators and the SDK's other calls get from the platform on the real runtime, driven by the unmodified E2B SDK
 * and CLI: template tags (assigned, moved, removed; a create from name:tag gets that build), sandbox metrics under
 * CPU load, the sandbox log through `e2b sandbox logs`, signed /files URLs in both forms fetched with curl, and the
 * Prometheus endpoints of the platform and the gateway, checked by promtool. Root only; its own /24 of the standalone
 * sandbox network, so it runs beside the other test files.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RunningGateway } from '../../../src/gateway';
import { DEFAULT_TEAM_NAME } from '../../../src/platform/teams/model';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { startPlatformAndGateway } from './helpers/platform-and-gateway';

jest.setTimeout(600_000);

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');
const DOMAIN = 'sandbox.test';

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skops-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  // No auto-resume: the metrics test reads a paused sandbox as paused.
  ({ platform, gateway, opts } = await startPlatformAndGateway(stateDir, agent, {
    gateway: {
      domain: DOMAIN,
      signedUrlOwner: (q) => platform.sandboxes.signedUrlOwner(q),
      metricsPort: 0,
      resumeSandbox: undefined,
    },
  }));
  sdk = await SdkDriver.start();
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

/** curl as a user would run it: status code and body. */
async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const out = join(stateDir, `curl-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const { stdout } = await run('curl', ['-sS', '-o', out, '-w', '%{http_code}', ...args], { timeout: 30_000 });
  const body = fs.readFileSync(out, 'utf8');
  fs.rmSync(out);
  return { status: Number(stdout), body };
}

async function sandboxRun(id: string, cmd: string): Promise<string> {
  return (await sdk.call<{ stdout: string }>(id, 'commands.run', cmd)).stdout;
}

test('tags: builds tag default, tags are assigned, moved and removed; a create from name:tag gets exactly that build', async () => {
  const name = `tags-${Date.now().toString(36)}`;
  const start = 'echo "start says $(cat /home/user/mark)"; touch /tmp/started; exec sleep infinity';
  const first = await sdk.buildWithStart(name, 'echo one > /home/user/mark', start, opts);
  expect(await sdk.template('assignTags', `${name}:default`, ['v1'], opts)).toEqual({ buildId: first.buildId, tags: ['v1'] });
  const second = await sdk.buildWithStart(name, 'echo two > /home/user/mark', start, opts);
  expect(second.buildId).not.toBe(first.buildId);

  const tags = await sdk.template<Array<{ tag: string; buildId: string }>>('getTags', name, opts);
  expect(tags.map(({ tag, buildId }) => ({ tag, buildId }))).toEqual([
    { tag: 'default', buildId: second.buildId },
    { tag: 'v1', buildId: first.buildId },
  ]);
  const v1 = await sdk.create(`${name}:v1`, opts);
  expect(await sandboxRun(v1.sandboxId, 'cat /home/user/mark')).toBe('one\n');
  const plain = await sdk.create(name, opts);
  expect(await sandboxRun(plain.sandboxId, 'cat /home/user/mark')).toBe('two\n');

  // Moved: v1 now names the second build; a sandbox made before keeps its own.
  expect(await sdk.template('assignTags', name, 'v1', opts)).toEqual({ buildId: second.buildId, tags: ['v1'] });
  const moved = await sdk.create(`${name}:v1`, opts);
  expect(await sandboxRun(moved.sandboxId, 'cat /home/user/mark')).toBe('two\n');
  expect(await sandboxRun(v1.sandboxId, 'cat /home/user/mark')).toBe('one\n');

  // The start command's output is in the sandbox's log, as the E2B CLI prints it.
  const home = await mkdtemp(join(tmpdir(), 'skops-cli-'));
  const cli = await run(process.execPath, [join(ROOT, 'node_modules/@e2b/cli/dist/index.js'), 'sandbox', 'logs', moved.sandboxId], {
    env: { PATH: process.env.PATH, HOME: home, E2B_API_KEY: opts.apiKey, E2B_API_URL: opts.apiUrl, NO_COLOR: '1' },
    timeout: 60_000,
  });
  fs.rmSync(home, { recursive: true, force: true });
  expect(cli.stdout).toContain('start says two');
  expect(cli.stdout).toContain('sandbox ready in');

  expect(await sdk.template('exists', 'base', opts)).toBe(true);
  expect(await sdk.template('exists', name, opts)).toBe(true);
  expect(await sdk.template('exists', `${name}:v1`, opts)).toBe(true);
  await sdk.template('removeTags', name, ['v1'], opts);
  expect(await sdk.template('exists', `${name}:v1`, opts)).toBe(false);
  await expect(sdk.create(`${name}:v1`, opts)).rejects.toMatchObject({ message: expect.stringContaining('not found') });
  expect((await sdk.template<Array<{ tag: string }>>('getTags', name, opts)).map((t) => t.tag)).toEqual(['default']);

  // Bad input: an unknown source tag, a malformed name:tag, removing a tag that is not set. Nothing changes.
  await expect(sdk.template('assignTags', `${name}:nope`, ['x'], opts)).rejects.toMatchObject({
    message: expect.stringContaining('has no build tagged "nope"'),
  });
  await expect(sdk.template('assignTags', `${name}:a:b`, ['x'], opts)).rejects.toMatchObject({
    message: expect.stringContaining('more than one ":"'),
  });
  await expect(sdk.template('assignTags', name, ['bad tag'], opts)).rejects.toMatchObject({ message: expect.stringContaining('tags') });
  await expect(sdk.template('removeTags', name, ['default', 'nope'], opts)).rejects.toMatchObject({
    message: expect.stringContaining('nothing was removed'),
  });
  expect((await sdk.template<Array<{ tag: string }>>('getTags', name, opts)).map((t) => t.tag)).toEqual(['default']);
  for (const s of [v1, plain, moved]) await sdk.call(s.sandboxId, 'kill');
});

test('metrics: a busy sandbox shows the CPU it used (near its limit when the host has CPU to spare), with memory and disk', async () => {
  const s = await sdk.create('base', opts);
  await sandboxRun(s.sandboxId, 'head -c 20M /dev/urandom > /home/user/blob');
  // Two busy loops for its one CPU for 16 s; bash's `time` says how much CPU they got (elapsed, user, system).
  const loadFrom = Date.now() / 1000;
  const timed = await sandboxRun(
    s.sandboxId,
    `TIMEFORMAT='%R %U %S'; { time (for i in 1 2; do timeout 16 sh -c 'while :; do :; done' & done; wait); } 2>&1`,
  );
  const loadTo = Date.now() / 1000;
  const [elapsed, user, system] = timed.trim().split(' ').map(Number) as [number, number, number];
  const measured = ((user + system) / elapsed) * 100;
  const samples = await sdk.call<Array<Record<string, number> & { timestamp: string }>>(s.sandboxId, 'getMetrics');
  // Samples whose whole 5 s interval lies under the load.
  const busy = samples.filter((m) => Date.parse(m.timestamp) / 1000 - 5 >= loadFrom && Date.parse(m.timestamp) / 1000 <= loadTo);
  expect(busy.length).toBeGreaterThanOrEqual(2);
  const reported = busy.reduce((sum, m) => sum + m.cpuUsedPct, 0) / busy.length;
  process.stderr.write(`metrics: loops measured ${measured.toFixed(1)}% of one CPU, the samples say ${reported.toFixed(1)}%\n`);
  expect(Math.abs(reported - Math.min(100, measured))).toBeLessThan(15);
  expect(reported).toBeGreaterThan(25);
  const last = busy.at(-1) as Record<string, number>;
  expect(last).toMatchObject({ cpuCount: 1, memTotal: 512 * 1024 * 1024 });
  expect(last.memUsed).toBeGreaterThan(0);
  expect(last.diskUsed).toBeGreaterThanOrEqual(20 * 1024 * 1024);
  expect(last.diskTotal).toBeGreaterThan(last.diskUsed as number);

  const list = await fetch(`${opts.apiUrl}/sandboxes/metrics?sandbox_ids=${s.sandboxId},nosuchsandbox`, {
    headers: { 'x-api-key': opts.apiKey },
  });
  const listed = (await list.json()) as { sandboxes: Record<string, { cpuCount: number }> };
  expect(Object.keys(listed.sandboxes)).toEqual([s.sandboxId]);
  const bad = await fetch(`${opts.apiUrl}/sandboxes/${s.sandboxId}/metrics?start=yesterday`, { headers: { 'x-api-key': opts.apiKey } });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { message: string }).message).toContain('"start"');

  // Another team's key: the sandbox, its metrics and its log are unknown (404), and the list form leaves it out.
  const admin = (path: string, body: unknown) =>
    fetch(`${opts.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': opts.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, string>>);
  await admin('/admin/teams', { name: 'other' });
  const other = (await admin('/admin/keys', { team: 'other', name: 'other-ci' })).key as string;
  await expect(sdk.static('getMetrics', s.sandboxId, { ...opts, apiKey: other })).rejects.toMatchObject({
    sdkName: 'SandboxNotFoundError',
  });
  const theirLog = await fetch(`${opts.apiUrl}/sandboxes/${s.sandboxId}/logs`, { headers: { 'x-api-key': other } });
  expect(theirLog.status).toBe(404);
  const theirList = await fetch(`${opts.apiUrl}/sandboxes/metrics?sandbox_ids=${s.sandboxId}`, { headers: { 'x-api-key': other } });
  expect(await theirList.json()).toEqual({ sandboxes: {} });
  expect((await fetch(`${opts.apiUrl}/metrics`, { headers: { 'x-api-key': other } })).status).toBe(403);

  await sdk.call(s.sandboxId, 'kill');
  await expect(sdk.static('getMetrics', s.sandboxId, opts)).rejects.toMatchObject({ sdkName: 'SandboxNotFoundError' });
});

test('signed URLs: both forms work with curl, expire, and refuse a changed signature', async () => {
  const s = await sdk.create('base', opts);
  await sdk.call(s.sandboxId, 'files.write', '/home/user/report.txt', 'signed content\n');

  // E2B_SANDBOX_URL form: <gateway>/files?path=...&signature=..., no sandbox ID in it.
  const url = await sdk.call<string>(s.sandboxId, 'downloadUrl', '/home/user/report.txt', { useSignatureExpiration: 4 });
  expect(url.startsWith(`${opts.sandboxUrl}/files?`)).toBe(true);
  expect(url).not.toContain(s.sandboxId);
  expect(await curl([url])).toEqual({ status: 200, body: 'signed content\n' });
  const tampered = url.replace(/signature=v1_./, (m) => `${m.slice(0, -1)}${m.endsWith('A') ? 'B' : 'A'}`);
  const refused = await curl([tampered]);
  expect(refused.status).toBe(403);
  expect(refused.body).toContain('no sandbox signed it');

  const local = join(stateDir, 'upload.txt');
  await writeFile(local, 'uploaded by curl\n');
  const upload = await sdk.call<string>(s.sandboxId, 'uploadUrl', '/home/user/uploaded.txt');
  const posted = await curl(['-F', `file=@${local}`, upload]);
  expect(posted.status).toBe(200);
  expect(await sandboxRun(s.sandboxId, 'cat /home/user/uploaded.txt; stat -c %U /home/user/uploaded.txt')).toBe('uploaded by curl\nuser\n');

  // Host form (E2B_DOMAIN): https://49983-<id>.<domain>/files?...; here without the TLS terminator in front.
  await sdk.connect(s.sandboxId, { apiKey: opts.apiKey, apiUrl: opts.apiUrl, domain: DOMAIN });
  const hostUrl = await sdk.call<string>(s.sandboxId, 'downloadUrl', '/home/user/report.txt', { useSignatureExpiration: 4 });
  expect(hostUrl.startsWith(`https://49983-${s.sandboxId}.${DOMAIN}/files?`)).toBe(true);
  const plain = hostUrl.replace(/^https:/, 'http:');
  const connectTo = ['--connect-to', `::127.0.0.1:${gateway.port}`];
  expect(await curl([...connectTo, plain])).toEqual({ status: 200, body: 'signed content\n' });
  // A URL for another path with this signature is refused by the sandbox's agent.
  expect((await curl([...connectTo, plain.replace('report.txt', 'uploaded.txt')])).status).toBe(401);

  await new Promise((r) => setTimeout(r, 5_500));
  const expired = await curl([url]);
  expect(expired.status).toBe(403);
  expect(expired.body).toContain('expired');
  const expiredHost = await curl([...connectTo, plain]);
  expect(expiredHost.status).toBe(401);
  expect(expiredHost.body).toContain('expired');
  await sdk.call(s.sandboxId, 'kill');
});

/**
 * The value of one series of a scrape that promtool (Prometheus's own parser) accepted: `name{labels} value` lines,
 * labels matched as given (a subset).
 */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const has = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) return Number(match[3]);
  }
  return 0;
}

async function promtool(text: string): Promise<void> {
  const file = join(stateDir, 'scrape.prom');
  fs.writeFileSync(file, text);
  // promtool's linter reads the exposition from stdin; a parse error exits non-zero.
  await run('bash', ['-c', `promtool check metrics < ${file}`]);
}

test('Prometheus: the platform and the gateway expose metrics that parse and move when work is done', async () => {
  const scrape = async () => {
    const res = await fetch(`${opts.apiUrl}/metrics`, { headers: { authorization: `Bearer ${opts.apiKey}` } });
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };
  const scrapeGateway = async () => (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  expect((await fetch(`${opts.apiUrl}/metrics`)).status).toBe(401);

  const before = await scrape();
  const gatewayBefore = await scrapeGateway();
  await promtool(before);
  await promtool(gatewayBefore);
  const creates = (text: string) => valueOf(text, 'sandboxkit_sandbox_operation_seconds_count', { operation: 'create', outcome: 'ok' });
  const running = (text: string) => valueOf(text, 'sandboxkit_sandboxes', { state: 'running', template: 'base' });
  const ok200 = (text: string) => valueOf(text, 'sandboxkit_gateway_requests_total', { status: '200' });

  const s = await sdk.create('base', opts);
  await sandboxRun(s.sandboxId, 'true');
  const after = await scrape();
  const gatewayAfter = await scrapeGateway();
  await promtool(after);
  await promtool(gatewayAfter);
  expect(creates(after)).toBe(creates(before) + 1);
  expect(running(after)).toBe(running(before) + 1);
  const held = (text: string) => valueOf(text, 'sandboxkit_team_quota_used', { team: DEFAULT_TEAM_NAME, quota: 'sandboxes' });
  expect(held(after)).toBe(held(before) + 1);
  for (const phase of ['network', 'container', 'agent', 'init', 'store+catalog'])
    expect(valueOf(after, 'sandboxkit_sandbox_phase_seconds_count', { operation: 'create', phase })).toBeGreaterThan(0);
  expect(valueOf(after, 'sandboxkit_template_builds_total', { outcome: 'ready' })).toBeGreaterThanOrEqual(2);
  expect(ok200(gatewayAfter)).toBeGreaterThan(ok200(gatewayBefore));
  expect(valueOf(gatewayAfter, 'sandboxkit_gateway_upstream_seconds_count')).toBeGreaterThan(
    valueOf(gatewayBefore, 'sandboxkit_gateway_upstream_seconds_count'),
  );

  const pausesBefore = valueOf(after, 'sandboxkit_sandbox_operation_seconds_count', { operation: 'pause', outcome: 'ok' });
  await sdk.call(s.sandboxId, 'pause');
  const paused = await scrape();
  expect(valueOf(paused, 'sandboxkit_sandboxes', { state: 'paused', template: 'base' })).toBe(1);
  expect(valueOf(paused, 'sandboxkit_sandbox_operation_seconds_count', { operation: 'pause', outcome: 'ok' })).toBe(pausesBefore + 1);
  await sdk.call(s.sandboxId, 'kill');
});
