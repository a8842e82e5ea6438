/**
 * The raw wire under the SDK: the signed upload URL (and refusing a forged one), COPY placement rules (directory
 * contents, globs, a file under a new name, owner and mode), and `logsOffset` paging of the build status.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_KEY, runIn, startTemplatePlatform, type TemplatePlatform } from './helpers/template-platform';

jest.setTimeout(300_000);

let platform: TemplatePlatform;
let work: string;

beforeAll(async () => {
  platform = await startTemplatePlatform();
  work = await mkdtemp(join(tmpdir(), 'sk-tpl-copy-'));
});

afterAll(async () => {
  await platform?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(platform.url + path, {
    method,
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === '' ? {} : JSON.parse(text)) as Record<string, any> };
}

async function waitDone(templateID: string, buildID: string): Promise<string> {
  for (;;) {
    const s = await api('GET', `/templates/${templateID}/builds/${buildID}/status?logsOffset=0`);
    if (s.body.status === 'ready' || s.body.status === 'error') return s.body.status as string;
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('COPY places uploaded files Dockerfile-style with owner and mode; the status pages its log by logsOffset', async () => {
  const ctx = join(work, 'ctx');
  await mkdir(join(ctx, 'conf', 'sub'), { recursive: true });
  await writeFile(join(ctx, 'conf', 'a.conf'), 'a\n');
  await writeFile(join(ctx, 'conf', 'sub', 'b.conf'), 'b\n');
  await writeFile(join(ctx, 'one.txt'), '1\n');
  await writeFile(join(ctx, 'two.txt'), '2\n');
  await writeFile(join(ctx, 'single.cfg'), 'single\n');
  const tarPath = join(work, 'ctx.tar.gz');
  execFileSync('tar', [
    '-czf',
    tarPath,
    '-C',
    ctx,
    '--no-recursion',
    'conf',
    'conf/a.conf',
    'conf/sub',
    'conf/sub/b.conf',
    'one.txt',
    'two.txt',
    'single.cfg',
  ]);
  const hash = createHash('sha256')
    .update(await readFile(tarPath))
    .digest('hex');

  const created = await api('POST', '/v3/templates', { name: 'copy-rules:v1', cpuCount: 1, memoryMB: 512 });
  expect(created.status).toBe(202);
  expect(created.body).toMatchObject({ tags: ['v1'], names: ['copy-rules'], aliases: ['copy-rules'], public: false });
  const { templateID, buildID } = created.body as { templateID: string; buildID: string };

  const link = await api('GET', `/templates/${templateID}/files/${hash}`);
  expect(link.body.present).toBe(false);
  const url = link.body.url as string;
  const forged = await fetch(url.replace(/sig=[^&]+/, 'sig=forged'), { method: 'PUT', body: await readFile(tarPath) });
  expect(forged.status).toBe(403);
  expect(((await forged.json()) as { message: string }).message).toBe('upload refused: the upload URL signature does not match');
  const put = await fetch(url, { method: 'PUT', body: await readFile(tarPath) });
  expect(put.status).toBe(201);
  expect((await api('GET', `/templates/${templateID}/files/${hash}`)).body.present).toBe(true);

  const copy = (src: string, dest: string, user = '', mode = '') => ({
    type: 'COPY',
    args: [src, dest, user, mode],
    force: false,
    filesHash: hash,
  });
  const start = await fetch(`${platform.url}/v2/templates/${templateID}/builds/${buildID}`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      fromImage: 'debian:bookworm',
      force: false,
      steps: [
        copy('conf', '/opt/conf'),
        copy('*.txt', '/opt/txt/', 'root', '0600'),
        copy('single.cfg', '/opt/renamed.cfg'),
        { type: 'RUN', args: ['for i in $(seq 1 250); do echo line $i; done'], force: false },
      ],
    }),
  });
  expect(start.status).toBe(202);
  expect(start.headers.get('content-length')).toBe('0');
  expect(await waitDone(templateID, buildID)).toBe('ready');

  // Built as copy-rules:v1: the name alone means its default tag, which this build does not carry.
  const t = await platform.service.resolve('copy-rules:v1');
  const probe = await runIn(platform, t!, 'cd /opt && find conf txt renamed.cfg | sort | xargs stat -c "%n %a %U"');
  expect(probe.out.split('\n')).toEqual([
    'conf 755 user',
    'conf/a.conf 644 user',
    'conf/sub 755 user',
    'conf/sub/b.conf 644 user',
    'renamed.cfg 644 user',
    'txt 755 root',
    'txt/one.txt 600 root',
    'txt/two.txt 600 root',
  ]);

  // Paging: pages of at most 100 from the offset asked for, an empty page at the end, together the whole log in order.
  const pages: Array<Array<{ message: string; step?: string; level: string; timestamp: string }>> = [];
  let offset = 0;
  for (;;) {
    const page = await api('GET', `/templates/${templateID}/builds/${buildID}/status?logsOffset=${offset}`);
    expect(page.body).toMatchObject({ templateID, buildID, status: 'ready', logs: [] });
    pages.push(page.body.logEntries);
    if (page.body.logEntries.length === 0) break;
    offset += page.body.logEntries.length;
  }
  expect(pages.slice(0, -1).every((p) => p.length > 0 && p.length <= 100)).toBe(true);
  const all = pages.flat();
  const lines = all.filter((e) => /^line \d+$/.test(e.message));
  expect(lines.map((e) => e.message)).toEqual(Array.from({ length: 250 }, (_, i) => `line ${i + 1}`));
  expect(new Set(lines.map((e) => e.step))).toEqual(new Set(['4']));
  expect(all.every((e) => !Number.isNaN(Date.parse(e.timestamp)) && ['debug', 'info', 'warn', 'error'].includes(e.level))).toBe(true);
  const middle = await api('GET', `/templates/${templateID}/builds/${buildID}/status?logsOffset=150`);
  expect(middle.body.logEntries).toEqual(all.slice(150, 250));
  const bad = await api('GET', `/templates/${templateID}/builds/${buildID}/status?logsOffset=-1`);
  expect(bad).toMatchObject({ status: 400, body: { code: 400, message: 'logsOffset: expected a non-negative integer (given: "-1")' } });

  // The list and the alias lookup show it.
  const list = await api('GET', '/templates');
  expect(list.body).toEqual([
    expect.objectContaining({ templateID, buildID, aliases: ['copy-rules'], buildStatus: 'ready', cpuCount: 1, memoryMB: 512 }),
  ]);
  expect((await api('GET', '/templates/aliases/copy-rules')).body).toEqual({ templateID, public: false });
  expect((await api('GET', '/templates/aliases/no-such')).status).toBe(404);
});
