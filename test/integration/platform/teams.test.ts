/**
 * Two teams on one platform (real runtime, real gateway), driven by the unmodified E2B SDK and CLI: every cross-team
 * call on a sandbox or a template is answered as for an unknown one while the owner's still works; a public template
 * is startable but not rebuildable by the other team; parallel creates never pass a quota; a revoked key stops at
 * once; the administration runs through `sandbox-kit team|key|audit`, and the audit trail lists what happened.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '../../../src/gateway';
import type { PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { CLI } from '../../helpers/cli';
import { makeTar } from '../../helpers/tar-writer';
import { SdkCallError, SdkDriver } from './helpers/sdk-driver';
import { startPlatformAndGateway } from './helpers/platform-and-gateway';
import { sdkBuild, succeeded } from './templates/helpers/sdk-run';

jest.setTimeout(300_000);

const ROOT = join(__dirname, '..', '..', '..');
const E2B_CLI = join(ROOT, 'node_modules', '@e2b', 'cli', 'dist', 'index.js');

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let sdk: SdkDriver;
let alpha: { teamID: string; key: string; keyID: string };
let beta: { teamID: string; key: string; keyID: string };

/** A child process, awaited without blocking this process (the platform answers it from here). */
function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const base: Record<string, string | undefined> = { ...process.env, HOME: stateDir };
    for (const k of Object.keys(base)) if (k.startsWith('E2B_') || k === 'SANDBOX_KIT_ADMIN_KEY') delete base[k];
    const child = spawn(process.execPath, [cmd, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** `sandbox-kit ARGS` as an operator on this machine: the platform's own key file is the admin key. */
async function admin(...args: string[]): Promise<string> {
  const r = await run(CLI, [...args, '--api-url', platform.url, '--api-key-file', platform.apiKeyFile]);
  if (r.code !== 0) throw new Error(`sandbox-kit ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const opts = (key: string) => ({ apiKey: key, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` });

async function api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${platform.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** The SDK's failure (its error class name), or 'ok'. */
async function outcome(work: Promise<unknown>): Promise<string> {
  return work.then(
    () => 'ok',
    (err: unknown) => (err instanceof SdkCallError ? err.sdkName : String(err)),
  );
}

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skt-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  ({ platform, gateway } = await startPlatformAndGateway(stateDir, agent));
  sdk = await SdkDriver.start();
  const makeTeam = async (name: string) => {
    const team = JSON.parse(await admin('team', 'create', name, '--json')) as { teamID: string };
    const key = JSON.parse(await admin('key', 'create', '--team', name, `${name}-ci`, '--json')) as { key: string; keyID: string };
    return { teamID: team.teamID, key: key.key, keyID: key.keyID };
  };
  alpha = await makeTeam('alpha');
  beta = await makeTeam('beta');
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  await sdk?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

test("another team's sandbox is unknown to every call (lists, gets, connects, timeouts, pauses, kills); the owner's calls work", async () => {
  const { sandboxId: id } = await sdk.create('base', { ...opts(alpha.key), metadata: { owner: 'alpha' } });
  const b = opts(beta.key);

  expect(await outcome(sdk.static('getInfo', id, b))).toMatch(/NotFoundError$/);
  expect(await outcome(sdk.connect(id, b))).toMatch(/NotFoundError$/);
  expect(await outcome(sdk.static('setTimeout', id, 60_000, b))).toMatch(/NotFoundError$/);
  expect(await outcome(sdk.static('pause', id, b))).toMatch(/NotFoundError$/);
  expect(await sdk.static('kill', id, b)).toBe(false);
  const betaList = await sdk.list(b);
  expect(betaList[0]!.items.map((s) => s.sandboxId)).not.toContain(id);

  // The answer is exactly that of a sandbox that does not exist: same status, same message.
  const theirs = await api(beta.key, 'GET', `/sandboxes/${id}`);
  const missing = await api(beta.key, 'GET', '/sandboxes/nosuchsandbox0000000');
  expect(theirs.status).toBe(404);
  expect(theirs.body).toEqual({ code: 404, message: (missing.body as { message: string }).message.replace('nosuchsandbox0000000', id) });
  const resume = await api(beta.key, 'POST', `/sandboxes/${id}/resume`, {});
  expect(resume.status).toBe(404);

  // The owner's calls all still work, and the sandbox was not touched by the other team's.
  const a = opts(alpha.key);
  expect((await sdk.static<{ sandboxId: string }>('getInfo', id, a)).sandboxId).toBe(id);
  await sdk.static('setTimeout', id, 120_000, a);
  expect((await sdk.list(a))[0]!.items.map((s) => s.sandboxId)).toContain(id);
  await sdk.connect(id, a);
  expect(await sdk.call<{ stdout: string }>(id, 'commands.run', 'echo alive')).toMatchObject({ stdout: 'alive\n' });
  expect(await sdk.static('kill', id, a)).toBe(true);
});

test('20 creates at once against a quota of 5: exactly 5 sandboxes, 15 answers 429 naming the quota; nothing left over', async () => {
  await admin('team', 'quota', 'alpha', '--sandboxes', '5');
  const results = await Promise.all(Array.from({ length: 20 }, () => outcome(sdk.create('base', opts(alpha.key)))));
  expect(results.filter((r) => r === 'ok')).toHaveLength(5);
  expect(results.filter((r) => r === 'RateLimitError')).toHaveLength(15);
  const direct = await api(alpha.key, 'POST', '/v2/sandboxes', { templateID: 'base' });
  expect(direct.status).toBe(429);
  expect((direct.body as { message: string }).message).toContain('concurrent sandboxes (sandboxes) is 5 for this team, which uses 5 now');

  // A quota below what the team uses now is refused, and the quota stays.
  const below = await run(CLI, [
    'team',
    'quota',
    'alpha',
    '--sandboxes',
    '2',
    '--api-url',
    platform.url,
    '--api-key-file',
    platform.apiKeyFile,
  ]);
  expect(below.code).toBe(1);
  expect(below.stderr).toContain("sandboxes: 2 is below the team's current use of concurrent sandboxes (5)");

  const running = (await sdk.list(opts(alpha.key)))[0]!.items;
  expect(running).toHaveLength(5);
  for (const s of running) expect(await sdk.static('kill', s.sandboxId as string, opts(alpha.key))).toBe(true);
  const teams = JSON.parse(await admin('team', 'list', '--json')) as Array<{ name: string; usage: { sandboxes: number } }>;
  expect(teams.find((t) => t.name === 'alpha')?.usage.sandboxes).toBe(0);
  await admin('team', 'quota', 'alpha', '--sandboxes', 'none');
});

test("the team's longest timeout bounds creates, connects and setTimeout (429 naming it); shorter ones work", async () => {
  await admin('team', 'quota', 'beta', '--max-timeout', '60');
  const long = await api(beta.key, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 120 });
  expect(long.status).toBe(429);
  expect((long.body as { message: string }).message).toContain(
    'the longest sandbox timeout (maxTimeoutSeconds) is 60 seconds for this team; 120 seconds were asked for',
  );
  // Left out, a create asks for the default 300 seconds: also beyond.
  expect((await api(beta.key, 'POST', '/v2/sandboxes', { templateID: 'base' })).status).toBe(429);
  const { sandboxId } = await sdk.create('base', { ...opts(beta.key), timeoutMs: 30_000 });
  expect(await outcome(sdk.static('setTimeout', sandboxId, 120_000, opts(beta.key)))).toBe('RateLimitError');
  await sdk.static('setTimeout', sandboxId, 45_000, opts(beta.key));
  expect((await api(beta.key, 'POST', `/v2/sandboxes/${sandboxId}/connect`, { timeout: 600 })).status).toBe(429);
  expect(await sdk.static('kill', sandboxId, opts(beta.key))).toBe(true);
  await admin('team', 'quota', 'beta', '--max-timeout', 'none');
});

test('a public template is startable by the other team, which can neither rebuild, change nor delete it', async () => {
  const context = await mkdtemp(join(stateDir, 'ctx-'));
  const built = succeeded(await sdkBuild(platform.url, 'slow', 'alpha-tools', context, undefined, false, alpha.key));
  const templateID = built.templateId;

  // Private: the other team cannot start it, by ID or by name, and hears what it would of a template that is not.
  const unknown = await api(beta.key, 'POST', '/v2/sandboxes', { templateID: 'no-such-template' });
  for (const name of [templateID, 'alpha-tools']) {
    const refused = await api(beta.key, 'POST', '/v2/sandboxes', { templateID: name });
    expect(refused).toEqual({
      status: 404,
      body: { code: 404, message: (unknown.body as { message: string }).message.replace('no-such-template', name) },
    });
    expect(await outcome(sdk.create(name, opts(beta.key)))).toBe(await outcome(sdk.create('no-such-template', opts(beta.key))));
  }
  expect((await api(beta.key, 'PATCH', `/v2/templates/${templateID}`, { public: true })).status).toBe(404);

  expect((await api(alpha.key, 'PATCH', `/v2/templates/${templateID}`, { public: true })).body).toEqual({ names: ['alpha-tools'] });
  const { sandboxId } = await sdk.create('alpha-tools', opts(beta.key));
  expect(await sdk.call<{ stdout: string }>(sandboxId, 'commands.run', 'echo from beta')).toMatchObject({ stdout: 'from beta\n' });
  await sdk.static('kill', sandboxId, opts(beta.key));

  // Read-only for beta: a build, a change or a delete of alpha's template is a call on an unknown one.
  expect((await api(beta.key, 'POST', `/v2/templates/${templateID}/builds/${built.buildId}`, { steps: [] })).status).toBe(404);
  expect((await api(beta.key, 'PATCH', `/v2/templates/${templateID}`, { public: false })).status).toBe(404);
  expect((await api(beta.key, 'DELETE', `/templates/${templateID}`)).status).toBe(404);
  // A build under the same name makes beta's own template; alpha's is untouched.
  const own = (await api(beta.key, 'POST', '/v3/templates', { name: 'alpha-tools' })).body as { templateID: string };
  expect(own.templateID).not.toBe(templateID);
  const alphas = (await api(alpha.key, 'GET', '/templates')).body as Array<{ templateID: string; buildCount: number }>;
  expect(alphas.find((t) => t.templateID === templateID)?.buildCount).toBe(1);
});

test("the unmodified E2B CLI lists only its own team's sandboxes and templates", async () => {
  const { sandboxId: mine } = await sdk.create('base', opts(beta.key));
  const { sandboxId: theirs } = await sdk.create('base', opts(alpha.key));
  const env = { E2B_API_KEY: beta.key, E2B_API_URL: platform.url, E2B_SANDBOX_URL: `http://127.0.0.1:${gateway.port}` };
  const sandboxes = await run(E2B_CLI, ['sandbox', 'list', '--format', 'json'], env);
  expect(sandboxes.code).toBe(0);
  const listed = (JSON.parse(sandboxes.stdout) as Array<{ sandboxId?: string; sandboxID?: string }>).map((s) => s.sandboxId ?? s.sandboxID);
  expect(listed).toContain(mine);
  expect(listed).not.toContain(theirs);

  const templates = await run(E2B_CLI, ['template', 'list', '--format', 'json'], env);
  expect(templates.code).toBe(0);
  const names = (JSON.parse(templates.stdout) as Array<{ aliases: string[]; templateID: string }>).map((t) => t.templateID);
  const alphaOnes = ((await api(alpha.key, 'GET', '/templates')).body as Array<{ templateID: string }>).map((t) => t.templateID);
  for (const id of alphaOnes) expect(names).not.toContain(id);
  expect(names.length).toBeGreaterThan(0);

  // GET /teams, as the CLI's auth reads it: the caller's own team, with the caller's own key.
  expect((await api(beta.key, 'GET', '/teams')).body).toEqual([{ teamID: beta.teamID, name: 'beta', apiKey: beta.key, isDefault: true }]);
  expect((await api(beta.key, 'GET', `/teams/${alpha.teamID}/metrics`)).status).toBe(404);
  const max = (await api(beta.key, 'GET', `/teams/${beta.teamID}/metrics/max?metric=concurrent_sandboxes`)).body as { value: number };
  expect(max.value).toBeGreaterThanOrEqual(1);
  await sdk.static('kill', mine, opts(beta.key));
  await sdk.static('kill', theirs, opts(alpha.key));
});

test("uploads are their team's: another team's files under the same hash are not there for it, and stored bytes count against the team's quota", async () => {
  const hash = 'ab'.repeat(32);
  const payload = makeTar([{ name: 'alpha.txt', data: 'files of alpha, under a hash beta may also name' }], true);
  const link = async (key: string, templateID: string) =>
    (await api(key, 'GET', `/templates/${templateID}/files/${hash}`)) as { status: number; body: { present: boolean; url: string } };
  const alphaT = ((await api(alpha.key, 'POST', '/v3/templates', { name: 'uploads-a' })).body as { templateID: string }).templateID;
  const betaT = ((await api(beta.key, 'POST', '/v3/templates', { name: 'uploads-b' })).body as { templateID: string }).templateID;

  const first = await link(alpha.key, alphaT);
  expect(first.body.present).toBe(false);
  expect((await fetch(first.body.url, { method: 'PUT', body: payload })).status).toBe(201);
  expect((await link(alpha.key, alphaT)).body.present).toBe(true);
  // Beta names the same hash for its own template: nothing is there for beta; alpha's template is unknown to beta.
  expect((await link(beta.key, betaT)).body.present).toBe(false);
  expect((await link(beta.key, alphaT)).status).toBe(404);
  const teams = JSON.parse(await admin('team', 'list', '--json')) as Array<{ name: string; usage: { templateBytes: number } }>;
  expect(teams.find((t) => t.name === 'alpha')?.usage.templateBytes).toBe(payload.length);
  expect(teams.find((t) => t.name === 'beta')?.usage.templateBytes).toBe(0);

  // Beyond beta's stored bytes quota the upload is refused, and nothing is stored.
  await admin('team', 'quota', 'beta', '--template-bytes', '10');
  const refused = await fetch((await link(beta.key, betaT)).body.url, { method: 'PUT', body: payload });
  expect(refused.status).toBe(429);
  expect(await refused.text()).toContain('stored bytes (templateBytes) is 10');
  expect((await link(beta.key, betaT)).body.present).toBe(false);
  await admin('team', 'quota', 'beta', '--template-bytes', 'none');
});

test('a revoked key is refused at its next request; a member key cannot administer; bad names are refused', async () => {
  const made = JSON.parse(await admin('key', 'create', '--team', 'beta', 'short-lived', '--json')) as { key: string; keyID: string };
  expect((await api(made.key, 'GET', '/v2/sandboxes')).status).toBe(200);
  await admin('key', 'revoke', made.keyID);
  const after = await api(made.key, 'GET', '/v2/sandboxes');
  expect(after.status).toBe(401);
  expect(await outcome(sdk.list(opts(made.key)))).toBe('AuthenticationError');
  const again = await run(CLI, ['key', 'revoke', made.keyID, '--api-url', platform.url, '--api-key-file', platform.apiKeyFile]);
  expect(again.stderr).toContain('not found (already revoked');

  expect((await api(beta.key, 'GET', '/admin/teams')).status).toBe(403);
  const tooLong = await run(CLI, ['team', 'create', 'x'.repeat(65), '--api-url', platform.url, '--api-key-file', platform.apiKeyFile]);
  expect(tooLong.code).toBe(1);
  expect(tooLong.stderr).toContain('expected a name of 1 to 64 characters');
  const badKeyName = await run(CLI, [
    'key',
    'create',
    '--team',
    'beta',
    'no spaces',
    '--api-url',
    platform.url,
    '--api-key-file',
    platform.apiKeyFile,
  ]);
  expect(badKeyName.stderr).toContain('expected a name of 1 to 64 characters');
  const teams = JSON.parse(await admin('team', 'list', '--json')) as Array<{ name: string }>;
  expect(teams.map((t) => t.name).sort()).toEqual(['alpha', 'beta', 'default']);
});

test('the audit trail lists what this test did: who, what, which, from where, with which answer', async () => {
  const entries = JSON.parse(await admin('audit', '--limit', '1000', '--json')) as Array<{
    teamID: string;
    keyID: string;
    action: string;
    target: string;
    from: string;
    status: number;
  }>;
  const of = (team: { keyID: string }, action: string, status?: number) =>
    entries.filter((e) => e.keyID === team.keyID && e.action === action && (status === undefined || e.status === status));
  expect(of(alpha, 'sandbox.create', 201).length).toBeGreaterThanOrEqual(7);
  expect(of(alpha, 'sandbox.create', 429).length).toBeGreaterThanOrEqual(15);
  expect(of(alpha, 'sandbox.kill', 204).length).toBeGreaterThanOrEqual(6);
  expect(of(beta, 'sandbox.kill', 404)).toHaveLength(1);
  expect(of(beta, 'sandbox.connect', 404)).toHaveLength(1);
  expect(of(alpha, 'template.update', 200)).toHaveLength(1);
  expect(of(alpha, 'template.build', 202)).toHaveLength(1);
  expect(entries.filter((e) => e.action === 'key.revoke' && e.status === 204)).toHaveLength(1);
  for (const e of entries) expect(e.from).toMatch(/127\.0\.0\.1/);
  expect(entries.find((e) => e.keyID === beta.keyID)?.teamID).toBe(beta.teamID);
});
