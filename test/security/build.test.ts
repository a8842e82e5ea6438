/**
 * Hostile template build steps (real crun containers from the cached Debian base, as the template builder runs a
 * RUN step): a step tries to reach a listener on the host's loopback and a canary on the host's private address,
 * directly and through the build proxy, and the cloud metadata address; all fail. The same step still installs a
 * Debian package from the mirror through the build proxy, and its files are owned by the user namespace's root.
 * A step writing past its disk gets ENOSPC, the host gives it no more than the disk, and nothing of the disk stays;
 * a step writing under it makes its layer with everything overlayfs records (whiteouts, opaque dirs, hard links).
 * Root only; touches no shared network (each step gets namespaces of its own).
 */
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { cleanupLeftovers } from '../../src/runtime/cleanup';
import { createStepExecutor, type OciStepExecutor } from '../../src/runtime/step-executor';
import { baseRootfs, ROOTFS_TIMEOUT_MS, uniqueName } from '../integration/runtime/helpers/common';
import { parseMountinfo } from '../../src/runtime/cgroup-layout';
import { instancePaths, STEPS_DATA_DIR } from '../../src/runtime/instance';
import { MIB } from '../../src/runtime/sandbox-disk';
import { exec } from '../../src/util/exec';
import { waitFor } from '../../src/util/poll';
import { sdkBuild, succeeded } from '../integration/platform/templates/helpers/sdk-run';
import { API_KEY, runIn, startTemplatePlatform, type TemplatePlatform } from '../integration/platform/templates/helpers/template-platform';
import { makeTar, type RawEntry } from '../helpers/tar-writer';
import { runScript } from '../helpers/node-script';
import { uploadFilesHash } from '../../src/platform/templates/files';

jest.setTimeout(180_000);

let rootfs: string;
let scratch: string;
let instance: string;
let steps: OciStepExecutor;
/** The same steps under runsc (gVisor), whose relay sits beside the step's namespace (build-relay-link.ts). */
let stepsRunsc: OciStepExecutor;
let canary: net.Server;
let canaryPort: number;
const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });

/** The host's own private address (the first non-loopback IPv4 of this machine). */
function hostPrivateAddress(): string {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('this host has no non-loopback IPv4 address');
}

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/sk-security-build-');
  instance = uniqueName('b');
  steps = createStepExecutor({ instance, ...roots() });
  stepsRunsc = createStepExecutor({ instance, runtime: 'runsc', ...roots() });
  canary = net.createServer((c) => c.end('HTTP/1.0 200 OK\r\n\r\ncanary-reached\n'));
  await new Promise<void>((resolve) => canary.listen(0, '0.0.0.0', resolve));
  canaryPort = (canary.address() as net.AddressInfo).port;
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  canary?.close();
  await cleanupLeftovers({ instance, ...roots() });
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

async function run(
  script: string,
  layerDir = fs.mkdtempSync(path.join(scratch, 'layer-')),
  more: Partial<Parameters<OciStepExecutor['run']>[0]> = {},
  lines: string[] = [],
  executor: OciStepExecutor = steps,
) {
  const code = await executor.run({
    layers: [rootfs],
    layerDir,
    argv: ['/bin/bash', '-c', script],
    user: 'root',
    workdir: '/',
    env: {},
    network: 'egress',
    memoryMB: 512,
    cpuCount: 1,
    timeoutMs: 120_000,
    onLine: (_s, line) => lines.push(line),
    ...more,
  });
  return { code, out: lines.join('\n'), layerDir };
}

/** The build steps' scratch directory (their bundles and disks) of this test's runtime instance. */
const stepsDir = () => path.join(instancePaths(instance, 'crun', roots()).dataDir, STEPS_DATA_DIR);

/** What the steps left: files in their scratch, mounts below it, loop devices of their disk images. */
async function stepLeftovers(dir = stepsDir()): Promise<string[]> {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => `file ${f}`) : [];
  const mounts = parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'))
    .filter((m) => m.mountPoint.startsWith(`${dir}/`))
    .map((m) => `mount ${m.mountPoint}`);
  const loops = (await exec(['losetup', '-l', '-n', '-O', 'BACK-FILE'])).stdout
    .split('\n')
    .filter((l) => l.includes(`${dir}/`))
    .map((l) => `loop ${l.trim()}`);
  return [...files, ...mounts, ...loops];
}

test('a RUN step writing past its disk gets ENOSPC; the host gives it no more than the disk; nothing of the disk is left', async () => {
  const gate = fs.mkdtempSync(path.join(scratch, 'gate-'));
  fs.chmodSync(gate, 0o755); // the step's root is a mapped uid
  const lines: string[] = [];
  let full: number | undefined;
  const done = run(
    [
      'dd if=/dev/zero of=/fill bs=1M count=1024 2>&1 | grep -o "No space left on device"',
      'fallocate -l 2G /fill2 2>&1; echo "fallocate $?"',
      'echo written; while [ ! -e /gate/open ]; do sleep 0.1; done; exit 1',
    ].join('\n'),
    undefined,
    { diskMB: 64, binds: [{ source: gate, target: '/gate' }], onDiskFull: (mb) => (full = mb), network: 'none' },
    lines,
  );
  try {
    await waitFor('the step to have written', () => (lines.includes('written') ? true : undefined), { timeoutMs: 120_000 });
    // While it runs: one disk image of the step's size, of which the host's file system gave it at most that much.
    const images = fs.readdirSync(stepsDir()).filter((f) => f.endsWith('.disk'));
    expect(images).toHaveLength(1);
    const image = fs.statSync(path.join(stepsDir(), images[0]!));
    expect(image.size).toBe(64 * MIB);
    expect(image.blocks * 512).toBeLessThanOrEqual(64 * MIB);
  } finally {
    fs.writeFileSync(path.join(gate, 'open'), '');
  }
  const r = await done;
  expect(r.code).toBe(1);
  expect(lines.slice(0, 3)).toEqual(['No space left on device', 'fallocate: fallocate failed: No space left on device', 'fallocate 1']);
  expect(full).toBe(64);
  expect(fs.readdirSync(r.layerDir)).toEqual([]); // a failed step's layer is the builder's to remove: it holds nothing
  expect(await stepLeftovers()).toEqual([]);
});

test('a RUN step writing under its disk makes its layer: files, owners, whiteouts, opaque dirs and hard links kept', async () => {
  const r = await run(
    [
      'dd if=/dev/zero of=/under bs=1M count=20 status=none && ln /under /under-link',
      'rm /etc/issue', // a whiteout
      'rm -rf /etc/apt && mkdir /etc/apt && echo mine > /etc/apt/only', // an opaque directory
      'useradd -m builder && install -o builder -m 4750 /bin/true /home/builder/suid',
    ].join(' && '),
    undefined,
    { diskMB: 64, network: 'none' },
  );
  expect(r.code).toBe(0);
  const under = fs.statSync(path.join(r.layerDir, 'under'));
  expect(under.size).toBe(20 * MIB);
  expect(under.nlink).toBe(2);
  expect(fs.statSync(path.join(r.layerDir, 'under-link')).ino).toBe(under.ino);
  expect([under.uid, under.gid]).toEqual([100000, 100000]);
  const whiteout = fs.lstatSync(path.join(r.layerDir, 'etc/issue'));
  expect([whiteout.isCharacterDevice(), whiteout.rdev]).toEqual([true, 0]);
  expect((await exec(['getfattr', '--only-values', '-n', 'trusted.overlay.opaque', path.join(r.layerDir, 'etc/apt')])).stdout).toBe('y');
  const suid = fs.statSync(path.join(r.layerDir, 'home/builder/suid'));
  expect((suid.mode & 0o7777).toString(8)).toBe('4750');
  expect(suid.uid).toBeGreaterThan(100000);
  // The layer's root as the step's "/": the mapped root's.
  expect(fs.statSync(r.layerDir).uid).toBe(100000);
  expect(await stepLeftovers()).toEqual([]);
});

// The step's network under crun (the relay on its loopback) and under runsc (the relay in a namespace beside it).
describe.each([
  ['crun', () => steps],
  ['runsc', () => stepsRunsc],
] as const)('%s', (runtime, executor) => {
  test("a RUN step reaches neither the host's loopback nor its private address nor the metadata address", async () => {
    const priv = hostPrivateAddress();
    const r = await run(
      [
        `for target in 127.0.0.1 ${priv}; do`,
        `  curl -sS -m 3 --noproxy '*' http://$target:${canaryPort}/ 2>/dev/null; echo "direct $target $?"`,
        // --noproxy '': through the proxy even where no_proxy would go direct (127.0.0.1)
        `  curl -sS -m 5 --noproxy '' http://$target:${canaryPort}/; echo " proxied $target $?"`,
        `  curl -sS -m 5 --noproxy '' https://$target:${canaryPort}/ 2>&1 | tail -1; echo "connect $target"`,
        'done',
        'curl -sS -m 5 http://169.254.169.254/latest/user-data; echo " metadata $?"',
        'ip -o -4 addr show | grep -v " lo " | wc -l',
        'ip route | grep -c default || true',
      ].join('\n'),
      undefined,
      {},
      [],
      executor(),
    );
    expect(r.out).not.toContain('canary-reached');
    for (const target of ['127.0.0.1', priv]) {
      expect(r.out).toMatch(new RegExp(`^direct ${target.replace(/\./g, '\\.')} 7$`, 'm')); // no route: connection refused
      expect(r.out).toContain(
        `template builds may not reach ${target} (${target}): loopback, private, link-local and metadata destinations are refused\n proxied ${target} 0`,
      );
      expect(r.out).toMatch(new RegExp(`CONNECT tunnel failed, response 403\\nconnect ${target.replace(/\./g, '\\.')}`));
    }
    expect(r.out).toContain('template builds may not reach 169.254.169.254');
    // No default route; besides loopback only, under runsc, the link to its relay (192.0.2.2/30).
    expect(r.out.trim().split('\n').slice(-2)).toEqual([runtime === 'runsc' ? '1' : '0', '0']);
    expect(r.code).toBe(0);
  });

  test('a RUN step still installs a Debian package through the build proxy; its files are owned by the mapped root', async () => {
    const r = await run(
      'apt-get update -qq && apt-get install -y -qq --no-install-recommends jq >/dev/null && jq --version && rm -rf /var/lib/apt/lists/* && uname -r',
      undefined,
      {},
      [],
      executor(),
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^jq-1\.6$/m);
    const jq = fs.statSync(path.join(r.layerDir, 'usr/bin/jq'));
    expect([jq.uid, jq.gid]).toEqual([100000, 100000]);
    // Under runsc the step ran on gVisor's kernel, not the host's.
    expect(r.out.trim().split('\n').at(-1) === os.release()).toBe(runtime !== 'runsc');
  });
});

/**
 * Hostile builds through the template API, driven by the unmodified SDK's `Template` builder (raw HTTP only for
 * what the SDK never sends: a hostile archive, bytes that do not match their hash), on a template service with small
 * limits: one build at a time, 1 KiB log lines, 256 KiB of log, a 20 s deadline, 128 MB of disk per step.
 */
describe('hostile builds through the template API', () => {
  const LIMITS = { concurrent: 1, logLineBytes: 1024, logBytes: 256 * 1024, deadlineSeconds: 20, stepDiskMB: 128 };
  let platform: TemplatePlatform;
  let contexts: string;

  beforeAll(async () => {
    platform = await startTemplatePlatform({ limits: LIMITS });
    contexts = fs.mkdtempSync('/var/tmp/sk-security-ctx-');
  }, ROOTFS_TIMEOUT_MS);

  afterAll(async () => {
    await platform?.stop();
    if (contexts) fs.rmSync(contexts, { recursive: true, force: true });
  });

  function context(files: Record<string, string | { link: string }> = {}): string {
    const dir = fs.mkdtempSync(path.join(contexts, 'c-'));
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      if (typeof content === 'string') fs.writeFileSync(path.join(dir, name), content);
      else fs.symlinkSync(content.link, path.join(dir, name));
    }
    return dir;
  }

  async function api(method: string, p: string, body?: unknown) {
    const res = await fetch(platform.url + p, {
      method,
      headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, any> };
  }

  async function storedLog(buildID: string): Promise<string[]> {
    return (await platform.redis.lrange(`sk:tpl:build:${buildID}:logs`, 0, -1)).map((r) => (JSON.parse(r) as { message: string }).message);
  }

  test('a log flood is bounded: a 5 MB line is cut with a marker, the volume stops at the cap, the build goes on', async () => {
    const b = await sdkBuild(platform.url, 'logFlood', 'sec-flood', context());
    const { buildId } = succeeded(b);
    const messages = await storedLog(buildId);
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m), 0);
    // The steps' output within the cap, plus the builder's own few lines.
    expect(bytes).toBeLessThan(LIMITS.logBytes + 16 * 1024);
    expect(
      messages.some((m) =>
        m.startsWith(`${'x'.repeat(1024)} [... ${5_000_000 - 1024} more bytes cut: lines are kept up to 1024 bytes (builds.logLineBytes)]`),
      ),
    ).toBe(true);
    expect(messages).toContain(
      `Log limit reached: this build's output past ${LIMITS.logBytes} bytes is not kept (builds.logBytes); the build goes on`,
    );
    expect(messages).not.toContain('flood-done');
    expect(messages.every((m) => Buffer.byteLength(m) <= 1024 + 120)).toBe(true);
  });

  test('a build past its deadline fails naming the limit; its running step is killed', async () => {
    const started = Date.now();
    const b = await sdkBuild(platform.url, 'sleepy', 'sec-deadline', context());
    expect(b.done).toBeUndefined();
    expect(b.error?.message).toMatch(/^the build ran past its deadline of 20 s \(builds\.deadlineSeconds\); step (base|1) \(/);
    expect(Date.now() - started).toBeLessThan(120_000);
    // The step's container is gone: nothing of it runs on the host any more.
    expect(execSync('pgrep -f "[s]leep 600 # " || true').toString().trim()).toBe('');
  });

  test('a RUN step writing past builds.stepDiskMB fails the build naming the limit, leaving nothing; one under it builds', async () => {
    const over = await sdkBuild(platform.url, 'diskFill', 'sec-disk-fill', context());
    expect(over.done).toBeUndefined();
    expect(over.error?.message).toMatch(
      /^step 1 \(RUN dd if=\/dev\/zero of=\/tmp\/fill bs=1M count=300 # .*\) ran out of disk: a build step may write 128 MB \(builds\.stepDiskMB\); it exited with code 1; last output:\n(.|\n)*No space left on device/,
    );
    const runtimeData = path.join(platform.dataDir, 'runtime-data');
    for (const inst of fs.readdirSync(runtimeData)) expect(await stepLeftovers(path.join(runtimeData, inst, STEPS_DATA_DIR))).toEqual([]);

    succeeded(await sdkBuild(platform.url, 'diskUnder', 'sec-disk-under', context()));
    const probe = await runIn(platform, (await platform.service.resolve('sec-disk-under'))!, 'stat -c %s /tmp/under');
    expect(probe.out).toBe(String(50 * MIB));
  });

  test('builds beyond the limit wait in a queue (status waiting, a log line saying so) and then run', async () => {
    const [first, second] = await Promise.all([
      sdkBuild(platform.url, 'slow', 'sec-queue-a', context(), 'Waiting for a build slot'),
      sdkBuild(platform.url, 'slow', 'sec-queue-b', context(), 'Waiting for a build slot'),
    ]);
    succeeded(first);
    succeeded(second);
    const waited = [first, second].filter((b) => b.logs.some((l) => l.startsWith('Waiting for a build slot')));
    expect(waited).toHaveLength(1);
    expect(waited[0]!.logs).toContain(
      'Waiting for a build slot: 1 builds are running on this host, at most 1 at once (builds.concurrent); 0 builds wait ahead of this one',
    );
    expect(waited[0]!.messages.find((m) => m.t === 'probe')).toMatchObject({ status: 'waiting' });
  });

  test('hostile archives are refused with 400 and nothing is kept: ../, a hard link out, a device', async () => {
    const created = await api('POST', '/v3/templates', { name: 'sec-archives', cpuCount: 1, memoryMB: 512 });
    const { templateID } = created.body as { templateID: string };
    const canary = `/etc/sk-security-canary-${process.pid}`;
    const cases: Array<[RawEntry[], string]> = [
      [[{ name: `../../..${canary}`, data: 'owned' }], 'climbs out of the upload with ..'],
      [[{ name: canary, data: 'owned' }], 'is an absolute path'],
      [[{ name: 'shadow', type: '1', linkname: '/etc/shadow' }], 'is a hard link to "/etc/shadow", outside the upload'],
      [[{ name: 'sda', type: '3' }], 'is a character device'],
    ];
    for (const [entries, why] of cases) {
      const bytes = makeTar(entries, true);
      const hash = createHash('sha256').update(bytes).digest('hex');
      const link = await api('GET', `/templates/${templateID}/files/${hash}`);
      const put = await fetch(link.body.url as string, { method: 'PUT', body: bytes });
      expect(put.status).toBe(400);
      const { message } = (await put.json()) as { message: string };
      expect(message.startsWith('upload refused: archive entry ')).toBe(true);
      expect(message).toContain(why);
      expect(message.endsWith('; nothing was kept')).toBe(true);
      expect((await api('GET', `/templates/${templateID}/files/${hash}`)).body.present).toBe(false);
    }
    expect(fs.existsSync(canary)).toBe(false);
    const files = path.join(platform.dataDir, 'files');
    expect(fs.existsSync(files) ? execSync(`find ${files} -type f`).toString() : '').toBe('');
  });

  test('a file written through a symlink to / in an archive is never written: the link is kept, inside the layer', async () => {
    const canary = `/etc/sk-security-through-${process.pid}`;
    const archive = path.join(contexts, 'escape.tar.gz');
    fs.writeFileSync(
      archive,
      makeTar(
        [
          { name: 'escape', type: '2', linkname: '/' },
          { name: `escape${canary}`, data: 'owned' },
        ],
        true,
      ),
    );
    // A hostile client can name its upload by the right files hash: the algorithm is public.
    const checked = await uploadFilesHash(archive, 'escape', '/opt/escape');
    expect(checked.verifiable).toBe(true);
    const hash = checked.verifiable ? checked.hash : '';
    const created = await api('POST', '/v3/templates', { name: 'sec-escape', cpuCount: 1, memoryMB: 512 });
    const { templateID, buildID } = created.body as { templateID: string; buildID: string };
    const link = await api('GET', `/templates/${templateID}/files/${hash}`);
    expect((await fetch(link.body.url as string, { method: 'PUT', body: fs.readFileSync(archive) })).status).toBe(201);
    const start = await api('POST', `/v2/templates/${templateID}/builds/${buildID}`, {
      fromImage: 'debian:bookworm',
      force: false,
      steps: [{ type: 'COPY', args: ['escape', '/opt/escape', '', ''], force: false, filesHash: hash }],
    });
    expect(start.status).toBe(202);
    for (;;) {
      const s = await api('GET', `/templates/${templateID}/builds/${buildID}/status`);
      if (s.body.status === 'ready' || s.body.status === 'error') break;
      await new Promise((r) => setTimeout(r, 300));
    }
    const t = await platform.service.resolve('sec-escape');
    expect(t).toBeDefined();
    const probe = await runIn(platform, t!, `readlink /opt/escape; test -e ${canary} && echo present || echo absent`);
    expect(probe.out.split('\n')).toEqual(['/', 'absent']);
    expect(fs.existsSync(canary)).toBe(false);
  });

  test('a symlink to / in a copied tree and a file copied through it stay inside the layer; a link inside the tree works', async () => {
    const canary = '/etc/sk-canary-through-link';
    const ctx = context({
      'tree/data.txt': 'data through a link\n',
      'tree/link.txt': { link: 'data.txt' },
      // The SDK uploads what a symlinked directory holds too (its glob follows one link): the host's / here.
      'tree/up': { link: '/' },
      'payload.txt': 'payload\n',
    });
    const b = await sdkBuild(platform.url, 'linkTree', 'sec-link-tree', ctx);
    const { buildId } = succeeded(b);
    expect(b.logs).toContain('data through a link');
    expect(b.logs).toContain('payload');
    expect(fs.existsSync(canary)).toBe(false);
    expect(buildId).toBeTruthy();
    const t = await platform.service.resolve('sec-link-tree');
    const probe = await runIn(platform, t!, `readlink /opt/tree/up; cat /opt/tree/link.txt ${canary}`);
    expect(probe.out.split('\n')).toEqual(['/', 'data through a link', 'payload']);
    // On the host the copied file is in the layer of its step, under the layer's own /etc.
    expect(t!.layers.some((l) => fs.existsSync(path.join(l, canary)))).toBe(true);
  });

  test("a layer's /etc/passwd made a symlink to a host file is resolved inside the layers, never read on the host", async () => {
    const ctx = context({ 'host-passwd': 'user:x:4242:4242::/host-secret-home:/bin/sh\n' });
    const b = await sdkBuild(platform.url, 'passwdToHost', 'sec-passwd', ctx);
    expect(b.error?.message).toContain('user "user" does not exist in the template\'s /etc/passwd');
    expect(b.logs.join('\n')).not.toContain('host-secret-home');
  });

  test('an upload whose bytes do not match its files hash is refused with 400 and removed; the SDK then uploads and builds', async () => {
    const ctx = context({ 'hello.txt': 'hello\n' });
    const hashes: Array<Record<string, unknown>> = [];
    await runScript(
      path.join(__dirname, '..', 'helpers', 'sdk-files-hashes.ts'),
      { context: ctx, copies: [{ src: 'hello.txt', dest: '/app/hello.txt' }] },
      (m) => hashes.push(m),
    );
    const hash = (hashes[0]!.hashes as string[])[0]!;
    // Someone with the team's key puts other bytes under that hash before the build.
    const created = await api('POST', '/v3/templates', { name: 'sec-hash', cpuCount: 1, memoryMB: 512 });
    const link = await api('GET', `/templates/${created.body.templateID}/files/${hash}`);
    const forged = makeTar([{ name: 'hello.txt', data: 'not hello\n' }], true);
    expect((await fetch(link.body.url as string, { method: 'PUT', body: forged })).status).toBe(201);
    expect((await api('GET', `/templates/${created.body.templateID}/files/${hash}`)).body.present).toBe(true);

    const refused = await sdkBuild(platform.url, 'copyHello', 'sec-hash', ctx);
    expect(refused.logs).toContain("Skipping upload of 'hello.txt', already cached");
    expect(refused.error?.message).toMatch(
      new RegExp(
        `^400: step 1 \\(COPY hello\\.txt /app/hello\\.txt\\): the files uploaded for files hash ${hash} do not match it \\(they hash to [0-9a-f]{64}\\); they were removed, upload them again`,
      ),
    );
    expect((await api('GET', `/templates/${created.body.templateID}/files/${hash}`)).body.present).toBe(false);

    const again = await sdkBuild(platform.url, 'copyHello', 'sec-hash', ctx);
    succeeded(again);
    expect(again.logs).toContain("Uploaded 'hello.txt'");
    const probe = await runIn(platform, (await platform.service.resolve('sec-hash'))!, 'cat /app/hello.txt');
    expect(probe.out).toBe('hello');
  });
});
