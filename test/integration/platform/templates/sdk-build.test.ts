/**
 * The unmodified E2B SDK builds a template on the kit: Debian base, apt packages, a copied file, env, workdir and a
 * start command that waits for a port. Logs stream while the build runs, in order; the template holds the file, the
 * package and the env; a rebuild with no change takes every layer from the cache.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdkBuild, succeeded } from './helpers/sdk-run';
import { runIn, startTemplatePlatform, type TemplatePlatform } from './helpers/template-platform';

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

test('the SDK builds a template; logs stream while it runs; the template has the file, the package and the env; a rebuild is all cache', async () => {
  const alias = `sdk-${Date.now().toString(36)}`;
  const first = await sdkBuild(platform.url, 'sample', alias, context, '^Get:\\d+ ');
  const info = succeeded(first);

  // Apt's first download line reached onBuildLogs while the build was still running: logs are not held to the end.
  const probe = first.messages.find((m) => m.t === 'probe');
  expect(probe).toMatchObject({ status: 'building' });

  // In order: each step's header, then its output, then the next step; the ready check last.
  const logs = first.logs;
  const order = [
    /^Requesting build/,
    /FROM debian:bookworm/,
    /^\[1\/4\] RUN apt-get update/,
    /Setting up jq/,
    /^\[2\/4\] COPY hello.txt/,
    /^\[3\/4\] ENV/,
    /^\[4\/4\] WORKDIR/,
    /ready command succeeded/,
    /is ready/,
  ];
  const positions = order.map((re) => logs.findIndex((m) => re.test(m)));
  expect(positions.filter((p) => p < 0)).toEqual([]);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);

  const t = await platform.service.resolve(alias);
  expect(t).toMatchObject({
    templateID: info.templateId,
    buildID: info.buildId,
    memoryMB: 1024,
    cpuCount: 1,
    user: 'user',
    workdir: '/app',
  });
  const probeRun = await runIn(
    platform,
    t!,
    'cat /app/hello.txt; stat -c "%a %U" /app/hello.txt; jq --version; echo "$GREETING|$APP_HOME"; pwd; whoami',
  );
  expect(probeRun.out.split('\n')).toEqual([
    'hello from the build context',
    '640 user',
    expect.stringMatching(/^jq-1\./),
    'hi there|/app',
    '/app',
    'user',
  ]);
  expect(probeRun.code).toBe(0);

  // The same definition again: every layer comes from the cache, no step runs.
  const second = await sdkBuild(platform.url, 'sample', alias, context);
  const again = second.logs;
  expect(again.filter((m) => /^CACHED /.test(m)).length).toBe(t!.layers.length - 1);
  expect(again.filter((m) => /Setting up|^Get:\d/.test(m))).toEqual([]);
  const t2 = await platform.service.resolve(alias);
  expect(t2!.templateID).toBe(info.templateId);
  expect(t2!.buildID).toBe(succeeded(second).buildId);
  expect(t2!.layers).toEqual(t!.layers);

  // skipCache: every step runs again into new layers; sandboxes on the old ones keep them.
  const forced = await sdkBuild(platform.url, 'sample', alias, context, undefined, true);
  succeeded(forced);
  expect(forced.logs.filter((m) => /^CACHED /.test(m))).toEqual([]);
  expect(forced.logs.some((m) => /Setting up jq/.test(m))).toBe(true);
  const t3 = await platform.service.resolve(alias);
  expect(t3!.layers.at(-1)).toBe(t!.layers.at(-1));
  expect(t3!.layers.slice(0, -1).filter((l) => t!.layers.includes(l))).toEqual([]);
  expect((await runIn(platform, t!, 'jq --version')).code).toBe(0);
});
