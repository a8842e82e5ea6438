/**
 * The unmodified E2B SDK builds a template on the kit: Debian base, apt packages, a copied file, env, workdir and a
 * start command that waits for a port. Logs stream while the build runs, in order; the template holds the file, the
 * package and the env; a rebuild with no change takes every layer from the cache.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScript } from './node-script';
import { API_KEY, runIn, startTemplatePlatform, type TemplatePlatform } from './setup';

jest.setTimeout(600_000);

let platform: TemplatePlatform;
let context: string;

beforeAll(async () => {
  platform = await startTemplatePlatform();
  context = await mkdtemp(join(tmpdir(), 'sk-tpl-ctx-'));
  await writeFile(join(context, 'hello.txt'), 'hello from the build context\n');
});

afterAll(async () => {
  await platform?.stop();
  if (context) await rm(context, { recursive: true, force: true });
});

type Message = Record<string, unknown> & { t: string; message?: string };

async function build(alias: string, probeOn?: string): Promise<{ messages: Message[]; done?: Message; error?: Message }> {
  const messages: Message[] = [];
  const result = await runScript(join(__dirname, 'sdk-client.ts'), { apiUrl: platform.url, apiKey: API_KEY, alias, context, probeOn }, (m) => messages.push(m as Message));
  if (result.code !== 0) throw new Error(`sdk client exited ${result.code}: ${result.stderr}`);
  const error = messages.find((m) => m.t === 'error');
  if (error) throw new Error(`build failed: ${error.message}\n${messages.filter((m) => m.t === 'log').slice(-40).map((m) => m.message).join('\n')}`);
  return { messages, done: messages.find((m) => m.t === 'done'), error: messages.find((m) => m.t === 'error') };
}

test('the SDK builds a template; logs stream while it runs; the template has the file, the package and the env; a rebuild is all cache', async () => {
  const alias = `sdk-${Date.now().toString(36)}`;
  const first = await build(alias, '^Get:\\d+ ');
  const info = first.done!.info as { templateId: string; buildId: string };

  // Apt's first download line reached onBuildLogs while the build was still running: logs are not held to the end.
  const probe = first.messages.find((m) => m.t === 'probe');
  expect(probe).toMatchObject({ status: 'building' });

  // In order: each step's header, then its output, then the next step; the ready check last.
  const logs = first.messages.filter((m) => m.t === 'log').map((m) => m.message!);
  const order = [/^Requesting build/, /FROM debian:bookworm/, /^\[1\/4\] RUN apt-get update/, /Setting up jq/, /^\[2\/4\] COPY hello.txt/, /^\[3\/4\] ENV/, /^\[4\/4\] WORKDIR/, /ready command succeeded/, /is ready/];
  const positions = order.map((re) => logs.findIndex((m) => re.test(m)));
  expect(positions.filter((p) => p < 0)).toEqual([]);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);

  const t = await platform.service.resolve(alias);
  expect(t).toMatchObject({ templateID: info.templateId, buildID: info.buildId, memoryMB: 1024, cpuCount: 1, user: 'user', workdir: '/app' });
  const probeRun = await runIn(platform, t!, 'cat /app/hello.txt; stat -c "%a %U" /app/hello.txt; jq --version; echo "$GREETING|$APP_HOME"; pwd; whoami');
  expect(probeRun.out.split('\n')).toEqual(['hello from the build context', '640 user', expect.stringMatching(/^jq-1\./), 'hi there|/app', '/app', 'user']);
  expect(probeRun.code).toBe(0);

  // The same definition again: every layer comes from the cache, no step runs.
  const second = await build(alias);
  const again = second.messages.filter((m) => m.t === 'log').map((m) => m.message!);
  expect(again.filter((m) => /^CACHED /.test(m)).length).toBe(t!.layers.length - 1);
  expect(again.filter((m) => /Setting up|^Get:\d/.test(m))).toEqual([]);
  const t2 = await platform.service.resolve(alias);
  expect(t2!.templateID).toBe(info.templateId);
  expect(t2!.buildID).toBe((second.done!.info as { buildId: string }).buildId);
  expect(t2!.layers).toEqual(t!.layers);
});
