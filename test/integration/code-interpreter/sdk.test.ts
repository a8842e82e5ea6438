/**
 * `@e2b/code-interpreter`, unmodified, on the real platform (OCI runtime, agent, template service) with the kit's
 * gateway in front: the SDK builds the code-interpreter-v1 template (Debian's Jupyter kernel, numpy, pandas,
 * matplotlib), then `Sandbox.create()` names no template and every call of the SDK goes through the gateway to the
 * kit's server on port 49999. Root only; the platform makes its own sandbox network on a free /24.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { startPlatformOnHost, type PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { runEntry } from '../../helpers/node-script';

jest.setTimeout(900_000);

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
const checks = new Map<string, Record<string, any>>();

beforeAll(async () => {
  await baseRootfs();
  for (const entry of bundleEntries().filter((e) => e.name === 'agent' || e.name === 'code-interpreter')) await bundle(entry);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-ci-sdk-'));
  platform = await startPlatformOnHost({ stateDir, log: (line) => process.stderr.write(`platform: ${line}\n`) });
  gateway = await startGateway({ catalog: platform.catalog });
  const build = await runEntry(path.join(__dirname, 'helpers', 'build-child.ts'), {
    args: [platform.url, platform.apiKey],
    timeoutMs: 800_000,
  });
  const lines = build.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { t: string; message?: string; ms?: number });
  const done = lines.find((l) => l.t === 'done');
  if (!done)
    throw new Error(
      `the build failed: ${lines.find((l) => l.t === 'error')?.message ?? build.stderr}\n${lines
        .filter((l) => l.t === 'log')
        .slice(-30)
        .map((l) => l.message)
        .join('\n')}`,
    );
  process.stderr.write(`code-interpreter-v1 built in ${done.ms} ms\n`);
  const opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
  const run = await runEntry(path.join(__dirname, 'helpers', 'sdk-child.ts'), { args: [JSON.stringify(opts)], timeoutMs: 600_000 });
  for (const line of run.stdout.filter((l) => l.startsWith('{'))) {
    const m = JSON.parse(line) as Record<string, any>;
    if (m.failed) throw new Error(`the SDK run failed: ${m.message}`);
    if (m.check) checks.set(m.check, m);
  }
  if (checks.size === 0) throw new Error(`the SDK child printed nothing (exit ${run.code}): ${run.stderr}`);
}, ROOTFS_TIMEOUT_MS + 1_500_000);

afterAll(async () => {
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

function check(name: string): Record<string, any> {
  const found = checks.get(name);
  if (!found) throw new Error(`the SDK run stopped before the ${name} check (got ${[...checks.keys()].join(', ')})`);
  return found;
}

test("runCode('x = 21\\nx * 2') gives 42 and the state stays for the next call", () => {
  expect(check('answer').text).toBe('42');
  expect(check('state').text).toBe('22');
});

test('stdout and stderr reach their callbacks in the order the code wrote them', () => {
  expect(check('streams').order).toEqual(['stdout:out0', 'stderr:err0', 'stdout:out1', 'stderr:err1', 'stdout:out2', 'stderr:err2']);
});

test('an exception is an ExecutionError with its name, value and traceback', () => {
  const { error } = check('exception');
  expect(error).toMatchObject({ name: 'ZeroDivisionError', value: 'division by zero' });
  // Jupyter's traceback, colours and all, as E2B's server passes it on.
  const plain = String(error.traceback).replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
  expect(plain).toContain('ZeroDivisionError');
  expect(plain).toContain('return 1 / 0');
});

test('a matplotlib figure comes back as PNG and SVG; a DataFrame as HTML and text; JSON as JSON', () => {
  const plot = check('plot');
  expect(plot.error).toBeUndefined();
  const figure = plot.results.find((r: { formats: string[] }) => r.formats.includes('png'));
  expect(figure.png).toBe('iVBORw0KGgoA');
  expect(figure.formats).toContain('svg');
  expect(figure.svg).toContain('<svg');
  const frame = check('dataframe');
  expect(frame.html).toContain('<table');
  expect(frame.html).toContain('<th>score</th>');
  expect(frame.text).toMatch(/name\s+score/);
  expect(check('json').json).toEqual({ k: [1, 2] });
});

test('javascript and bash contexts keep their own state', () => {
  const js = check('javascript');
  expect(js.context).toMatchObject({ language: 'javascript', id: expect.any(String) });
  expect([js.first, js.second, js.direct]).toEqual(['42', '40', '[ 2, 4, 6 ]']);
  expect(js.logs).toEqual(['from js 20\n']);
  const bash = check('bash');
  expect(bash.context).toMatchObject({ language: 'bash', cwd: '/tmp' });
  expect(bash.first).toBe('/tmp\n');
  expect(bash.second).toBe('kept=yes\n');
});

test('envs hold for one execution only', () => {
  expect(check('envs')).toMatchObject({ with: "'hello'", without: "'None'", bash: '[bash-hello]\n' });
});

test('timeoutMs interrupts a busy loop; the kernel and its state survive', () => {
  const t = check('timeout');
  expect(t.thrown).toMatchObject({ name: 'TimeoutError' });
  expect(t.after).toBe('21');
  expect(t.error).toBeUndefined();
});

test('a killed kernel is reported and replaced: the next call works, the old state is gone', () => {
  const k = check('killed');
  expect(k.error).toBe('KernelDied');
  expect(k.after).toBe('2');
  expect(k.state).toBe('NameError');
});

test('contexts are listed, restarted (state lost) and removed', () => {
  const c = check('contexts');
  expect(c.afterRestart).toBe('NameError');
  expect(c.listed).toBe(true);
  expect(c.listedAfter).toBe(false);
  expect(c.removedRun).toMatchObject({ name: 'NotFoundError', message: expect.stringContaining('not found') });
});

test('bad input gets the errors the SDK expects and loses nothing', () => {
  const b = check('bad-input');
  expect(b.badLanguage).toMatchObject({ name: 'SandboxError', message: expect.stringContaining('400') });
  expect(b.badContextLanguage).toMatchObject({ name: 'SandboxError', message: expect.stringContaining('400') });
  expect(b.unknownContext).toMatchObject({ name: 'NotFoundError', message: expect.stringContaining('context no-such-context not found') });
  expect(b.invalidJson.status).toBe(400);
  expect(b.invalidJson.body).toContain('not valid JSON');
  expect(b.stillWorks).toBe('2');
});

test('with allowPublicTraffic: false the SDK still works (it sends the traffic token); a caller without it gets 401', () => {
  expect(check('private-ports')).toMatchObject({ answer: '42', stranger: 401 });
  expect(check('private-ports').contexts).toBeGreaterThan(0);
});
