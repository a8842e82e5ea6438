/**
 * Bad template builds: each fails with a message naming the step and the cause, within its timeout, and leaves
 * nothing behind (no ready build, no layer outside the cache, no scratch files, no mounts but the runtime's shared data
 * directory).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdkBuild } from './helpers/sdk-run';
import { API_KEY, startTemplatePlatform, type TemplatePlatform } from './helpers/template-platform';
import { DEFAULT_TEAM_ID } from '../../../../src/platform/teams/model';

jest.setTimeout(300_000);

let platform: TemplatePlatform;
let context: string;

beforeAll(async () => {
  platform = await startTemplatePlatform({ readyTimeoutMs: 3_000 });
  context = await mkdtemp(join(tmpdir(), 'sk-tpl-ctx-'));
});

afterAll(async () => {
  await platform?.stop();
  if (context) await rm(context, { recursive: true, force: true });
});

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: { code?: number; message?: string } & Record<string, unknown> }> {
  const res = await fetch(platform.url + path, {
    method,
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : JSON.parse(text) };
}

async function newBuild(name: string): Promise<{ templateID: string; buildID: string }> {
  const res = await api('POST', '/v3/templates', { name, cpuCount: 1, memoryMB: 512 });
  expect(res.status).toBe(202);
  return res.body as unknown as { templateID: string; buildID: string };
}

/** Nothing of a failed build remains: no ready build, every layer directory is one the cache knows, scratch is empty. */
async function expectNothingLeft(alias: string): Promise<void> {
  expect(await platform.service.resolve(alias)).toBeUndefined();
  const layers = await readdir(join(platform.dataDir, 'layers')).catch(() => [] as string[]);
  const known = new Set<string>();
  for (const key of await platform.redis.keys('sk:tpl:layer:*')) {
    known.add(
      JSON.parse((await platform.redis.get(key))!)
        .dir.split('/')
        .pop(),
    );
  }
  expect(layers.filter((d) => !known.has(d))).toEqual([]);
  expect(await readdir(join(platform.dataDir, 'scratch')).catch(() => [])).toEqual([]);
  // The runtime's data directory stays bound onto itself, shared, for the platform's life (sandbox-disk.ts, so step
  // and sandbox disks reach every mount namespace); nothing else of the platform's may stay mounted.
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point.startsWith(platform.dataDir));
  expect(mounts.filter((point) => !/\/runtime-data\/[^/]+$/.test(point))).toEqual([]);
}

test('an unknown step type is refused, naming the step and the supported types', async () => {
  const { templateID, buildID } = await newBuild('bad-step-type');
  const res = await api('POST', `/v2/templates/${templateID}/builds/${buildID}`, {
    fromImage: 'debian:bookworm',
    steps: [
      { type: 'RUN', args: ['true'] },
      { type: 'ADD', args: ['x', '/x'] },
    ],
  });
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ code: 400, message: 'step 2 (ADD x /x): unknown step type "ADD"; supported: RUN, COPY, ENV, WORKDIR, USER' });
  const status = await api('GET', `/templates/${templateID}/builds/${buildID}/status`);
  expect(status.body).toMatchObject({ status: 'error', reason: { step: '2' } });
  await expectNothingLeft('bad-step-type');
});

test('a COPY source outside the file context is refused', async () => {
  const { templateID, buildID } = await newBuild('bad-copy-source');
  const res = await api('POST', `/v2/templates/${templateID}/builds/${buildID}`, {
    fromImage: 'debian:bookworm',
    steps: [{ type: 'COPY', args: ['../etc/passwd', '/app/', '', ''], filesHash: 'a'.repeat(64) }],
  });
  expect(res.status).toBe(400);
  expect(res.body.message).toBe(
    `step 1 (COPY ../etc/passwd /app/): the COPY source "../etc/passwd" is outside the template's file context; expected a path inside it (no leading ..)`,
  );
  await expectNothingLeft('bad-copy-source');
});

test('a base image that is not an image reference is refused, saying what one looks like', async () => {
  const { templateID, buildID } = await newBuild('bad-image');
  const res = await api('POST', `/v2/templates/${templateID}/builds/${buildID}`, { fromImage: 'Ubuntu 22.04', steps: [] });
  expect(res.status).toBe(400);
  expect(res.body.message).toContain('fromImage: image "Ubuntu 22.04": ');
  expect(res.body.message).toContain('expected [registry[:port]/]repository[:tag]');
});

test("a package that does not exist fails its step with apt's words", async () => {
  const b = await sdkBuild(platform.url, 'missingPackage', 'bad-package', context);
  expect(b.error?.name).toBe('BuildError');
  expect(b.error?.message).toMatch(/^step 1 \(RUN apt-get update && .*\) failed with exit code 100; last output:\n/);
  expect(b.error?.message).toContain('E: Unable to locate package sandbox-kit-no-such-package');
  await expectNothingLeft('bad-package');
});

test('a RUN that exits non-zero fails with its step, exit code and last lines', async () => {
  const b = await sdkBuild(platform.url, 'failingRun', 'bad-run', context);
  expect(b.error?.message).toBe(
    'step 2 (RUN echo about to fail && echo on stderr >&2 && exit 3) failed with exit code 3; last output:\n[2/2] RUN echo about to fail && echo on stderr >&2 && exit 3\nabout to fail\non stderr',
  );
  // The step before it succeeded and stays cached; the failed step left no layer.
  await expectNothingLeft('bad-run');
});

test('a ready command that never succeeds fails the build at finalize within the ready timeout', async () => {
  const b = await sdkBuild(platform.url, 'neverReady', 'bad-ready', context);
  expect(b.error?.message).toBe('the ready command never succeeded within 3 s: false');
  await expectNothingLeft('bad-ready');
});

test('a build of an unknown template ID is 404, naming it', async () => {
  const res = await api('POST', '/v2/templates/nosuchtemplate/builds/00000000-0000-0000-0000-000000000000', {
    fromImage: 'debian:bookworm',
    steps: [],
  });
  expect(res.status).toBe(404);
  expect(res.body).toEqual({
    code: 404,
    message: 'template "nosuchtemplate" not found; create it with POST /v3/templates (Template.build)',
  });
  const status = await api('GET', '/templates/nosuchtemplate/builds/00000000-0000-0000-0000-000000000000/status');
  expect(status.status).toBe(404);
});

test('a second build of a template while one runs is refused with 409; the first one finishes', async () => {
  const first = sdkBuild(platform.url, 'slow', 'busy', context);
  // Wait until the first build runs, then ask for another one of the same template.
  let running: string | undefined;
  let templateID: string | undefined;
  for (let i = 0; i < 300 && !running; i++) {
    templateID = await platform.service.store.templateIDByName(DEFAULT_TEAM_ID, 'busy');
    running = templateID ? await platform.service.store.runningBuild(templateID) : undefined;
    if (!running) await new Promise((r) => setTimeout(r, 100));
  }
  expect(running).toBeDefined();
  const second = await newBuild('busy');
  expect(second.templateID).toBe(templateID);
  const res = await api('POST', `/v2/templates/${second.templateID}/builds/${second.buildID}`, {
    fromImage: 'debian:bookworm',
    steps: [{ type: 'RUN', args: ['true'] }],
  });
  expect(res.status).toBe(409);
  expect(res.body.message).toBe(`template ${templateID} already has a build running (${running}); wait for it to finish, then build again`);
  const done = await first;
  expect(done.error).toBeUndefined();
  expect((await platform.service.resolve('busy'))?.buildID).toBe(running);
});
