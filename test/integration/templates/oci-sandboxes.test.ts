/**
 * Templates from OCI images, end to end as a user has them: the platform on the real runtime with the gateway in
 * front, the lab's `docker-registry` on loopback (open, and with htpasswd users), and the unmodified SDK doing
 * `Template.build` from `fromImage('<lab registry>/...')`, from a Dockerfile whose FROM names such an image, from a
 * private image with its credentials and from `fromBaseImage()`, then `Sandbox.create` from the template by its
 * mixed-case name, commands and files. The sandbox has the image's exact files, modes, owners and links (after a
 * whiteout and an opaque directory); the image's Env, WorkingDir and User apply in it and a start command runs as
 * the SDK sets it. Registry credentials stay out of process arguments, logs, build logs, template views, the
 * platform's Redis and its state directory; wrong ones are an error naming the registry.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { OciLayoutImages } from '../../../src/lab/oci-images';
import { type LabRegistry, startLabRegistry } from '../../../src/lab/registry';
import { runScript } from '../../helpers/node-script';
import { addMultiLayers } from './helpers/multi-layer-image';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';
import { startPlatformAndGateway, type PlatformAndGateway } from '../platform/helpers/platform-and-gateway';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';

jest.setTimeout(900_000);

const USER = { username: 'labuser', password: `pw-${randomBytes(9).toString('hex')}` };
const WRONG = `wrong-${randomBytes(9).toString('hex')}`;

let stack: PlatformAndGateway | undefined;
let redisServer: ThrowawayRedis | undefined;
let open: LabRegistry | undefined;
let locked: LabRegistry | undefined;
let work: string;
let stateDir: string;
const platformLog: string[] = [];

interface Run {
  logs: string[];
  built?: { templateId: string; buildId: string };
  error?: string;
  sandbox?: { templateId: string; commands: Array<{ exitCode: number; stdout: string; stderr: string }>; read?: string };
}

async function sdk(input: Record<string, unknown>): Promise<Run> {
  const messages: Array<Record<string, any>> = [];
  const r = await runScript(join(__dirname, 'helpers', 'oci-sandbox-client.ts'), { ...stack!.opts, ...input }, (m) => messages.push(m));
  if (r.code !== 0) throw new Error(`the SDK client exited ${r.code}: ${r.stderr}`);
  return {
    logs: messages.filter((m) => m.t === 'log').map((m) => String(m.message)),
    built: messages.find((m) => m.t === 'built')?.info,
    error: messages.find((m) => m.t === 'error')?.message,
    sandbox: messages.find((m) => m.t === 'sandbox') as Run['sandbox'],
  };
}

function sandboxOf(run: Run): NonNullable<Run['sandbox']> {
  if (!run.sandbox) throw new Error(`no sandbox: ${run.error}\n${run.logs.slice(-30).join('\n')}`);
  return run.sandbox;
}

const out = (run: Run) => sandboxOf(run).commands.map((c) => `${c.exitCode} ${c.stdout.trim()}`);

async function api(path: string): Promise<string> {
  const res = await fetch(`${stack!.opts.apiUrl}${path}`, { headers: { 'x-api-key': stack!.opts.apiKey } });
  expect(res.status).toBe(200);
  return res.text();
}

/**
 * What the platform runs skopeo with: a `skopeo` first on PATH records its own command line as /proc shows it to
 * every user of the machine, and the mode of the auth file it names (and of its directory), then runs the real one.
 */
const SKOPEO_SPY = `#!/bin/sh
log="$SKOPEO_SPY_LOG"
{ tr '\\0' ' ' < /proc/$$/cmdline; echo; } >> "$log"
next=
for a in "$@"; do
  if [ -n "$next" ]; then echo "authfile $(stat -c %a "$a") dir $(stat -c %a "$(dirname "$a")")" >> "$log"; fi
  case "$a" in --authfile|--src-authfile) next=1 ;; *) next= ;; esac
done
exec /usr/bin/skopeo "$@"
`;
let spyLog: string;
const originalPath = process.env.PATH;

/** The skopeo command lines (and auth file modes) recorded while `fn` ran. */
async function skopeoRuns<T>(fn: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  fs.writeFileSync(spyLog, '');
  const result = await fn();
  return { result, lines: fs.readFileSync(spyLog, 'utf8').split('\n').filter(Boolean) };
}

beforeAll(async () => {
  const rootfs = await baseRootfs();
  work = await mkdtemp(join(tmpdir(), 'sko-sbx-'));
  stateDir = join(work, 'platform');
  fs.mkdirSync(stateDir);
  const agent = await freshAgentPayload(join(work, 'bundle'));
  fs.mkdirSync(join(work, 'bin'));
  fs.writeFileSync(join(work, 'bin', 'skopeo'), SKOPEO_SPY, { mode: 0o755 });
  spyLog = join(work, 'skopeo-runs.log');
  process.env.SKOPEO_SPY_LOG = spyLog;
  process.env.PATH = `${join(work, 'bin')}:${originalPath}`;
  redisServer = await startRedis();
  [stack, open, locked] = await Promise.all([
    startPlatformAndGateway(stateDir, agent, {
      platform: {
        redisUrl: redisServer.url,
        log: (line) => {
          platformLog.push(line);
          process.stderr.write(`platform: ${line}\n`);
        },
      },
    }),
    startLabRegistry({ dir: join(work, 'registry-open') }),
    startLabRegistry({ dir: join(work, 'registry-locked'), users: { [USER.username]: USER.password } }),
  ]);

  // The Debian root file system as the base layer, then a layer with the image's own user and its directory.
  const images = new OciLayoutImages(join(work, 'layout'));
  await images.init('empty');
  await images.insert('empty', rootfs, '/', 'app');
  // The image's own user and its directory with a file, the files whose modes, owners and links the sandbox must
  // show exactly, then a layer making `data/dir` opaque and one removing `data/gone` (a whiteout).
  await addMultiLayers(images, {
    rootfs,
    work,
    from: 'app',
    to: 'app',
    extra: (layer) => fs.writeFileSync(join(layer, 'srv', 'app', 'hello.txt'), 'hello from the image\n'),
  });
  await images.push('app', `${open.host}/lab/app:1`);
  // The private image has a layer of its own, so its pull fetches a blob (with the credentials) besides asking.
  const p = join(work, 'layer-private');
  fs.mkdirSync(p);
  fs.writeFileSync(join(p, 'private.txt'), 'only with credentials\n');
  await images.insert('app', p, '/srv/app', 'private');
  await images.push('private', `${locked.host}/lab/private:1`, USER);
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  process.env.PATH = originalPath;
  delete process.env.SKOPEO_SPY_LOG;
  await stack?.gateway.close();
  await stack?.platform.close({ killSandboxes: true });
  await Promise.allSettled([open?.stop(), locked?.stop(), redisServer?.stop()]);
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('fromImage of a multi-layer registry image: a sandbox by the mixed-case name has its exact files, runs as its user, in its WorkingDir, with its Env and the start command', async () => {
  const run = await sdk({
    name: 'ociApp',
    from: { image: `${open!.host}/lab/app:1` },
    start: { cmd: 'echo "$(whoami) $(pwd) $APP_MODE" > /tmp/started; sleep infinity', readyFile: '/tmp/started' },
    commands: [
      'whoami; pwd; echo "$APP_MODE"',
      'cat /tmp/started',
      'cat hello.txt',
      'stat -c "%U %a" /srv/app note.txt',
      [
        'cd /data',
        'for f in file hl suid owned dir/new; do stat -c "%n %a %u %g %h" "$f"; done',
        'readlink link; cat link',
        'stat -c %i file hl | sort -u | wc -l',
        'test -e gone && echo gone-present || echo gone-absent',
        'ls -A dir',
      ].join('; '),
    ],
    file: { path: '/srv/app/note.txt', content: 'written through the SDK\n' },
  });
  const sbx = sandboxOf(run);
  expect(sbx.templateId).toBe(run.built!.templateId);
  expect(out(run)).toEqual([
    '0 app\n/srv/app\nlab',
    '0 app /srv/app lab',
    '0 hello from the image',
    '0 app 755\napp 644',
    [
      '0 file 644 0 0 2',
      'hl 644 0 0 2',
      'suid 4755 0 0 1',
      'owned 640 1000 1000 1',
      'dir/new 644 0 0 1',
      'file',
      'content',
      '1',
      'gone-absent',
      'new',
    ].join('\n'),
  ]);
  expect(sbx.read).toBe('written through the SDK\n');
});

test('a Dockerfile whose FROM names a registry image: its steps, ENV, WORKDIR, USER and CMD apply in the sandbox', async () => {
  const dockerfile = [
    `FROM ${open!.host}/lab/app:1`,
    'RUN echo built-by-run > /opt/from-dockerfile && chown app /opt/from-dockerfile',
    'ENV STAGE=docker',
    'WORKDIR /opt',
    'USER app',
    'CMD echo "cmd $STAGE $(whoami)" > /tmp/cmd-ran && sleep infinity',
  ].join('\n');
  const run = await sdk({
    name: 'ociFromDockerfile',
    from: { dockerfile },
    commands: ['whoami; pwd; echo "$STAGE $APP_MODE"', 'cat /opt/from-dockerfile /tmp/cmd-ran'],
  });
  expect(out(run)).toEqual(['0 app\n/opt\ndocker lab', '0 built-by-run\ncmd docker app']);
});

test('a private image: the right credentials build and never show in argv, logs, views, Redis or state; wrong ones name the registry', async () => {
  const image = `${locked!.host}/lab/private:1`;
  const wrong = await sdk({ name: 'ociPrivateWrong', from: { image, credentials: { ...USER, password: WRONG } } });
  expect(wrong.built).toBeUndefined();
  expect(wrong.error).toContain(`registry ${locked!.host} refused access`);
  expect(wrong.error).toContain('with the credentials given');

  const { result: run, lines } = await skopeoRuns(() =>
    sdk({ name: 'ociPrivate', from: { image, credentials: USER }, commands: ['whoami; cat hello.txt private.txt'] }),
  );
  expect(out(run)).toEqual(['0 app\nhello from the image\nonly with credentials']);

  // skopeo ran (inspect, then copy of the new layer) with an auth file of mode 0600 in a directory of mode 700.
  const argvs = lines.filter((l) => !l.startsWith('authfile '));
  expect(argvs.some((l) => / inspect .*--authfile /.test(l))).toBe(true);
  expect(argvs.some((l) => / copy .*--src-authfile /.test(l))).toBe(true);
  expect(new Set(lines.filter((l) => l.startsWith('authfile ')))).toEqual(new Set(['authfile 600 dir 700']));
  for (const l of argvs) expect(l).not.toContain(USER.password);

  const secrets = [USER.password, WRONG, Buffer.from(`${USER.username}:${USER.password}`).toString('base64')];
  const seen: Record<string, string> = {
    'build logs': [...run.logs, ...wrong.logs].join('\n'),
    'platform log': platformLog.join('\n'),
    'template list': await api('/templates'),
    'template alias view': await api('/templates/aliases/ociPrivate'),
    'build status': await api(`/templates/${run.built!.templateId}/builds/${run.built!.buildId}/status?logsOffset=0`),
  };
  const redis = new Redis(redisServer!.url);
  try {
    const dump: string[] = [];
    for (const key of await redis.keys('*')) {
      const type = await redis.type(key);
      if (type === 'string') dump.push((await redis.get(key)) ?? '');
      if (type === 'hash') dump.push(JSON.stringify(await redis.hgetall(key)));
      if (type === 'list') dump.push(...(await redis.lrange(key, 0, -1)));
      if (type === 'set') dump.push(...(await redis.smembers(key)));
      if (type === 'zset') dump.push(...(await redis.zrange(key, 0, -1)));
    }
    seen.redis = dump.join('\n');
  } finally {
    redis.disconnect();
  }
  for (const [where, text] of Object.entries(seen))
    for (const secret of secrets) expect([where, text.includes(secret)]).toEqual([where, false]);
  // Nothing under the platform's state directory holds them (grep exits 1 when no file matches).
  for (const secret of secrets) {
    let status = 0;
    try {
      execFileSync('grep', ['-rlF', '--no-messages', secret, stateDir], { stdio: 'pipe' });
    } catch (err) {
      status = (err as { status: number }).status;
    }
    expect([secret === WRONG ? 'wrong' : 'right', status]).toEqual([secret === WRONG ? 'wrong' : 'right', 1]);
  }
});

test('fromBaseImage() with no registry configured is the kit base: a sandbox runs as user in /home/user', async () => {
  const run = await sdk({
    name: 'ociBase',
    from: { baseImage: true },
    commands: ['whoami; pwd; test -x /usr/bin/python3 && echo python3'],
  });
  expect(run.logs.join('\n')).not.toMatch(/e2bdev\/base.*(pull|registry)/i);
  expect(out(run)).toEqual(['0 user\n/home/user\npython3']);
});

test('fromAWSRegistry: keys for a registry not on ECR are refused at once; for ECR they reach its helper by environment, never argv or the host home', async () => {
  const keys = {
    accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64'),
    region: 'eu-west-1',
  };
  const elsewhere = await sdk({ name: 'ociAwsElsewhere', from: { aws: `${open!.host}/lab/app:1`, credentials: keys } });
  expect(elsewhere.error).toContain(`fromAWSRegistry: ${open!.host} is not an Amazon ECR registry`);

  const ecrDir = join(process.env.HOME ?? '/root', '.ecr');
  const sizes = () =>
    fs.existsSync(ecrDir) ? execFileSync('find', [ecrDir, '-type', 'f', '-printf', '%p %s\n'], { encoding: 'utf8' }) : '';
  const before = sizes();
  const host = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';
  const { result: ecr, lines } = await skopeoRuns(() => sdk({ name: 'ociAws', from: { aws: `${host}/lab/app:1`, credentials: keys } }));
  expect(ecr.built).toBeUndefined();
  // This machine reaches no AWS: the registry cannot be reached (one that can gets ECR's refusal of made-up keys).
  expect(ecr.error).toMatch(
    new RegExp(`registry ${host.replace(/\./g, '\\.')} (cannot be reached|refused access .* with the AWS keys given)`),
  );
  expect(lines.some((l) => / inspect .*--authfile /.test(l))).toBe(true);
  for (const l of lines) for (const secret of [keys.accessKeyId, keys.secretAccessKey]) expect(l).not.toContain(secret);
  expect(sizes()).toBe(before);
  for (const text of [ecr.logs.join('\n'), ecr.error ?? '', platformLog.join('\n')]) expect(text).not.toContain(keys.secretAccessKey);
});
