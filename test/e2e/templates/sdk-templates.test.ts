/**
 * `sandbox-kit up` in a fresh state gives every template the SDKs create from by default: once the core system is up
 * the service builds mcp-gateway and code-interpreter-v1 in the background (progress in `status`), a create that
 * names one while it builds waits and then says so, and then the unmodified `@e2b/code-interpreter` does everything a
 * user does with it through the local system's gateway. No command but `up` (and `down --purge` to clean up).
 */
import * as path from 'node:path';
import type { LocalStatus, UpJson } from '../../../src/local';
import { cli, requireBuilt, uniqueLabName } from '../../helpers/lab';
import { runEntry } from '../../helpers/node-script';
import { startTlsDomain } from '../../helpers/tls-domain';
import { CODE_INTERPRETER_LINES } from './helpers/code-interpreter-lines';

jest.setTimeout(1_800_000);

const name = uniqueLabName('tpl');
const checks = new Map<string, Record<string, any>>();
const waits: { template: string; message: string }[] = [];
const created = new Map<string, { stdout: string; createMs: number }>();
const status: { during?: LocalStatus; after?: LocalStatus } = {};
/** What each earlier `@e2b/code-interpreter` release did against the same system (code-interpreter-line.ts). */
const earlier = new Map<string, Record<string, any>>();
let upErr = '';
let secondUp: { code: number; ready: boolean; templates: LocalStatus['templates'] } | undefined;

/** Polls status until every template is ready or failed (or time is up); the last status. */
async function templatesSettled(timeoutMs: number): Promise<LocalStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = JSON.parse((await cli(['status', '--name', name, '--json'])).stdout) as LocalStatus;
    const settled = s.templates.length > 0 && s.templates.every((t) => t.state === 'ready' || t.state === 'failed');
    if (settled || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 3_000));
  }
}

async function createFrom(opts: object, template: string, command: string): Promise<void> {
  const deadline = Date.now() + 1_200_000;
  for (;;) {
    const run = await runEntry(path.join(__dirname, 'helpers', 'create-child.ts'), {
      args: [JSON.stringify({ opts, template, command })],
      timeoutMs: 120_000,
    });
    const line = run.stdout.find((l) => l.startsWith('{'));
    if (line === undefined) throw new Error(`the create child printed nothing (exit ${run.code}): ${run.stderr}`);
    const answer = JSON.parse(line) as { ok: boolean; stdout: string; createMs: number; message: string };
    if (answer.ok) {
      created.set(template, answer);
      return;
    }
    waits.push({ template, message: answer.message });
    if (!/is (still being built|waiting to be built) by sandbox-kit up/.test(answer.message) || Date.now() > deadline)
      throw new Error(`create from ${template}: ${answer.message}`);
  }
}

beforeAll(async () => {
  requireBuilt();
  const up = await cli(['up', '--name', name, '--gateway-port', '0', '--sandboxes', '1', '--json'], 600_000);
  upErr = up.stderr;
  if (up.code !== 0) throw new Error(`up failed (${up.code}): ${up.stderr.slice(-3000)}`);
  const info = JSON.parse(up.stdout) as UpJson;
  status.during = JSON.parse((await cli(['status', '--name', name, '--json'])).stdout) as LocalStatus;
  const opts = { apiKey: info.apiKey!, apiUrl: info.apiUrl!, sandboxUrl: info.sandboxUrl };
  await createFrom(opts, 'mcp-gateway', 'test -x /usr/local/bin/mcp-gateway && echo mcp-gateway-present');
  await createFrom(opts, 'code-interpreter-v1', 'python3 -c "import pandas, matplotlib; print(pandas.__version__)"');
  status.after = JSON.parse((await cli(['status', '--name', name, '--json'])).stdout) as LocalStatus;
  const run = await runEntry(path.join(__dirname, '..', '..', 'helpers', 'code-interpreter-sdk.ts'), {
    args: [JSON.stringify(opts)],
    timeoutMs: 600_000,
  });
  for (const line of run.stdout.filter((l) => l.startsWith('{'))) {
    const m = JSON.parse(line) as Record<string, any>;
    if (m.failed) throw new Error(`the SDK run failed: ${m.message}`);
    if (m.check) checks.set(m.check, m);
  }
  if (checks.size === 0) throw new Error(`the SDK child printed nothing (exit ${run.code}): ${run.stderr}`);

  // The earlier releases, on the template just built: configured by the environment alone, each as its users do.
  // Those that reach Jupyter only by host name get the E2B_DOMAIN form: TLS on loopback names, as a DNS zone gives.
  const gatewayPort = Number(new URL(info.sandboxUrl).port);
  const domain = await startTlsDomain('localhost', gatewayPort);
  try {
    for (const line of CODE_INTERPRETER_LINES) {
      const where = line.connection === 'urls' ? { E2B_API_URL: info.apiUrl!, E2B_SANDBOX_URL: info.sandboxUrl } : domain.env;
      const ran = await runEntry(path.join(__dirname, 'helpers', 'code-interpreter-line.ts'), {
        args: [],
        env: { ...where, E2B_API_KEY: info.apiKey!, SDK_PACKAGE: line.pkg },
        timeoutMs: 240_000,
      });
      const answer = ran.stdout.find((l) => l.startsWith('{'));
      earlier.set(line.pkg, answer ? JSON.parse(answer) : { ok: false, message: `printed nothing (exit ${ran.code}): ${ran.stderr}` });
    }
  } finally {
    await domain.close();
  }

  // A later up, after down: the platform's kept state serves every step of every template from the layer cache.
  await cli(['down', '--name', name], 120_000);
  const again = await cli(['up', '--name', name, '--gateway-port', '0', '--sandboxes', '1', '--json'], 600_000);
  const settled = again.code === 0 ? await templatesSettled(600_000) : undefined;
  secondUp = {
    code: again.code,
    ready: settled?.templates.every((t) => t.state === 'ready') ?? false,
    templates: settled?.templates ?? [],
  };
}, 3_600_000);

afterAll(async () => {
  await cli(['down', '--name', name, '--purge'], 120_000);
});

function check(key: string): Record<string, any> {
  const found = checks.get(key);
  if (!found) throw new Error(`the SDK run stopped before the ${key} check (got ${[...checks.keys()].join(', ')})`);
  return found;
}

test('up says it builds both templates in the background; status shows them building, then ready', () => {
  expect(upErr).toContain(
    "[templates] building mcp-gateway and code-interpreter-v1 in the background; 'sandbox-kit status' shows their progress",
  );
  expect(status.during?.healthy).toBe(true);
  expect(status.during?.templates.map((t) => t.name)).toEqual(['mcp-gateway', 'code-interpreter-v1']);
  for (const t of status.during?.templates ?? []) expect(['waiting', 'building', 'ready']).toContain(t.state);
  expect(status.after?.templates.map((t) => [t.name, t.state])).toEqual([
    ['mcp-gateway', 'ready'],
    ['code-interpreter-v1', 'ready'],
  ]);
});

test('creates from mcp-gateway and code-interpreter-v1 work with no other command; while one builds, the create says so', () => {
  expect(created.get('mcp-gateway')?.stdout).toBe('mcp-gateway-present\n');
  expect(created.get('code-interpreter-v1')?.stdout).toMatch(/^\d+\.\d+/);
  for (const w of waits)
    expect(w.message).toMatch(
      new RegExp(
        `template "${w.template}" is (still being built by sandbox-kit up \\(for \\d+ s\\)|waiting to be built by sandbox-kit up); 'sandbox-kit status' shows its progress`,
      ),
    );
});

test.each(CODE_INTERPRETER_LINES)(
  '@e2b/code-interpreter $version (on e2b $e2b, by $connection): runCode gives 42 and keeps its state',
  (line) => {
    expect(earlier.get(line.pkg)).toMatchObject({ ok: true, answer: '42', state: '22' });
  },
);

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

test('a later up, after down, builds every step of both templates from the layer cache', () => {
  expect(secondUp).toMatchObject({ code: 0, ready: true });
  for (const t of secondUp?.templates ?? []) {
    expect(t.layerSteps).toBeGreaterThan(0);
    expect({ name: t.name, cached: t.cachedSteps }).toEqual({ name: t.name, cached: t.layerSteps });
  }
});
