/**
 * Every E2B SDK line people have in their lockfiles, each the unmodified npm package (installed side by side under
 * an alias in package.json), against one real platform and gateway: the journey of an application (create from
 * base, commands, files, list, setTimeout, kill), plus pause/connect and a template build where the line has them.
 * 1.x knows only E2B_DOMAIN: it reaches the same gateway over TLS on a test domain (tls-domain.ts), the gateway
 * carrying `api.{domain}` to the platform API as on a host with a DNS zone and a load balancer.
 * Root only, like sdk-real.test.ts (one link into the root network namespace on a /24 of its own).
 */
import * as fs from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { newApiKey } from '../../../src/platform/teams/api-keys';
import { startPlatformOnHost, type PlatformOnHost } from '../../../src/platform/on-host';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { SdkDriver } from './helpers/sdk-driver';
import { SDK_LINES, type SdkLine } from './helpers/sdk-lines';
import { startTlsDomain, type TlsDomain } from '../../helpers/tls-domain';

jest.setTimeout(240_000);

/** A key of the form earlier releases made: SDKs 2.27 to 2.45 refuse it before sending, the others send it. */
const OLD_FORM_KEY = 'sk_AnEarlierReleasesKey0123456789';
/** A name under the reserved `.test` TLD: only the SDK processes' preloaded resolver knows it. */
const TEST_DOMAIN = 'sdk-compat.test';

let stateDir: string;
let platform: PlatformOnHost;
let gateway: RunningGateway;
let tlsDomain: TlsDomain;
let urlOpts: { apiKey: string; apiUrl: string; sandboxUrl: string };
const drivers = new Map<string, SdkDriver>();

beforeAll(async () => {
  await baseRootfs();
  stateDir = await mkdtemp(join(tmpdir(), 'skv-'));
  const apiKeyFile = join(stateDir, 'api-keys');
  const key = newApiKey();
  await writeFile(apiKeyFile, `${key}\n${OLD_FORM_KEY}\n`, { mode: 0o600 });
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  platform = await startPlatformOnHost({
    stateDir,
    agent,
    apiKeyFile,
    log: (line) => process.stderr.write(`platform: ${line}\n`),
  });
  const api = new URL(platform.url);
  gateway = await startGateway({
    catalog: platform.catalog,
    domain: TEST_DOMAIN,
    apiUpstream: { host: api.hostname, port: Number(api.port) },
    resumeSandbox: async (id) => void (await platform.sandboxes.connect(id, 300)),
  });
  tlsDomain = await startTlsDomain(TEST_DOMAIN, gateway.port);
  urlOpts = { apiKey: key, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
}, ROOTFS_TIMEOUT_MS);

afterAll(async () => {
  for (const d of drivers.values()) await d.close();
  await tlsDomain?.close();
  await gateway?.close();
  await platform?.close({ killSandboxes: true });
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

/** What is left on the platform of the sandboxes a line made (each test tags them with its version). */
async function sandboxesOf(line: SdkLine): Promise<string[]> {
  return (await platform.sandboxes.all()).filter((r) => r.metadata.line === line.version).map((r) => r.sandboxID);
}

/** How a line reports an API error of this status: its class for it, or (1.x) SandboxError naming the status. */
function apiError(line: SdkLine, status: 401 | 404, classes: RegExp): Record<string, unknown> {
  return line.apiErrorClasses
    ? { sdkName: expect.stringMatching(classes) }
    : { sdkName: 'SandboxError', message: expect.stringContaining(`${status}: `) };
}

/** The options a line's calls carry: the URLs (2.x), or only the key, E2B_DOMAIN saying where (1.x). */
function optsFor(line: SdkLine): Record<string, string> {
  return line.connection === 'urls' ? urlOpts : { apiKey: urlOpts.apiKey };
}

/** A line's SDK in a process configured as the docs tell users: E2B_API_KEY, E2B_API_URL, E2B_SANDBOX_URL (2.x; 2.10's
 * pause reads only these, not the options the sandbox was made with), or E2B_DOMAIN on a host that resolves and
 * trusts the domain (1.x). */
async function driver(line: SdkLine, env: Record<string, string> = {}): Promise<SdkDriver> {
  const name = `${line.pkg} ${JSON.stringify(env)}`;
  let d = drivers.get(name);
  if (!d) {
    const where = line.connection === 'urls' ? { E2B_API_URL: urlOpts.apiUrl, E2B_SANDBOX_URL: urlOpts.sandboxUrl } : tlsDomain.env;
    d = await SdkDriver.start({ E2B_API_KEY: urlOpts.apiKey, ...where, ...env }, line.pkg);
    drivers.set(name, d);
  }
  return d;
}

describe.each(SDK_LINES)('e2b $version', (line) => {
  test('the journey: create from base, commands, files, list, setTimeout, kill', async () => {
    const opts = optsFor(line);
    const sdk = await driver(line);
    const s = await sdk.create('base', { ...opts, metadata: { line: line.version }, envs: { LINE: line.version } });
    const run = await sdk.call<{ stdout: string; exitCode: number }>(s.sandboxId, 'commands.run', 'echo "$LINE as $(whoami) in $PWD"');
    expect(run).toMatchObject({ exitCode: 0, stdout: `${line.version} as user in /home/user\n` });

    await sdk.call(s.sandboxId, 'files.write', '/home/user/note.txt', `written by ${line.version}`);
    expect(await sdk.call(s.sandboxId, 'files.read', '/home/user/note.txt')).toBe(`written by ${line.version}`);

    const pages = await sdk.list({ ...opts, query: { metadata: { line: line.version } } });
    expect(pages[0].items.map((i) => i.sandboxId)).toEqual([s.sandboxId]);

    await sdk.call(s.sandboxId, 'setTimeout', 90_000);
    const info = await sdk.call<{ endAt: string }>(s.sandboxId, 'getInfo');
    expect(Date.parse(info.endAt) - Date.now()).toBeLessThanOrEqual(90_000);
    expect(Date.parse(info.endAt) - Date.now()).toBeGreaterThan(30_000);

    if (line.pause) {
      expect(await sdk.call(s.sandboxId, line.pause)).toBe(true);
      expect((await platform.sandboxes.get(s.sandboxId)).state).toBe('paused');
      await sdk.connect(s.sandboxId, opts);
      expect((await sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'cat note.txt')).stdout).toBe(`written by ${line.version}`);
    }

    expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
    // The line's own error for a 404 (2.10 names it NotFoundError).
    await expect(sdk.static('getInfo', s.sandboxId, opts)).rejects.toMatchObject(apiError(line, 404, /^(Sandbox)?NotFoundError$/));
    expect(await sandboxesOf(line)).toEqual([]);
  });

  if (line.build) {
    test('a template build, and a sandbox from it', async () => {
      const opts = optsFor(line);
      const sdk = await driver(line);
      const alias = `compat-${line.pkg}`;
      await sdk.build(alias, `echo ${line.version} | sudo tee /etc/built-by`, { apiKey: opts.apiKey, apiUrl: opts.apiUrl });
      const s = await sdk.create(alias, opts);
      expect((await sdk.call<{ stdout: string }>(s.sandboxId, 'commands.run', 'cat /etc/built-by')).stdout).toBe(`${line.version}\n`);
      expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
    });
  }

  test('a key of the earlier form: sent and accepted where the line does not check it, refused client-side where it does', async () => {
    const opts = optsFor(line);
    const sdk = await driver(line);
    const attempt = sdk.create('base', { ...opts, apiKey: OLD_FORM_KEY });
    if (line.checksKeyForm) {
      await expect(attempt).rejects.toMatchObject({
        sdkName: 'AuthenticationError',
        message: expect.stringContaining('Invalid API key format'),
      });
    } else {
      const s = await attempt;
      expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
    }
    if (line.keyCheckOptOut) {
      const unchecked = await driver(line, { E2B_VALIDATE_API_KEY: 'false' });
      const s = await unchecked.create('base', { ...opts, apiKey: OLD_FORM_KEY });
      expect(await unchecked.static('kill', s.sandboxId, opts)).toBe(true);
    }
    // A wrong key in the right form: the platform's 401, the same for every line.
    await expect(sdk.create('base', { ...opts, apiKey: newApiKey() })).rejects.toMatchObject(apiError(line, 401, /^AuthenticationError$/));
  });

  test('allowInternetAccess: false reaches the platform from every line: the sandbox holds a deny of everything', async () => {
    const opts = optsFor(line);
    const sdk = await driver(line);
    const s = await sdk.create('base', { ...opts, metadata: { line: line.version }, allowInternetAccess: false });
    const record = (await platform.sandboxes.all()).find((r) => r.sandboxID === s.sandboxId);
    expect(record?.egress?.allowInternetAccess).toBe(false);
    expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
    expect(await sandboxesOf(line)).toEqual([]);
  });
});

describe.each(SDK_LINES.filter((l) => l.volumeMounts))('e2b $version', (line) => {
  test('volumeMounts reaches the platform from every line that sends it: the sandbox mounts the volume', async () => {
    const opts = optsFor(line);
    const sdk = await driver(line);
    const name = `line-${line.version.replace(/[^0-9]/g, '-')}`;
    const made = await fetch(`${platform.url}/volumes`, {
      method: 'POST',
      headers: { 'x-api-key': urlOpts.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    const { volumeID } = (await made.json()) as { volumeID: string };
    const s = await sdk.create('base', { ...opts, metadata: { line: line.version }, volumeMounts: { '/data': name } });
    const record = (await platform.sandboxes.all()).find((r) => r.sandboxID === s.sandboxId);
    expect(record?.volumeMounts).toEqual([expect.objectContaining({ name, path: '/data', volumeID })]);
    expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
    const destroyed = await fetch(`${platform.url}/volumes/${volumeID}`, { method: 'DELETE', headers: { 'x-api-key': urlOpts.apiKey } });
    expect(destroyed.status).toBe(204);
  });

  test('network.maskRequestHost reaches the platform from every line that sends it; a bad one is refused with the same message; nothing is left', async () => {
    const opts = optsFor(line);
    const sdk = await driver(line);
    const mask = ['localhost:$', '{PORT}'].join('');
    const s = await sdk.create('base', { ...opts, metadata: { line: line.version }, network: { maskRequestHost: mask } });
    const record = (await platform.sandboxes.all()).find((r) => r.sandboxID === s.sandboxId);
    expect(record?.maskRequestHost).toBe(mask);
    expect(await sdk.static('kill', s.sandboxId, opts)).toBe(true);
    await expect(
      sdk.create('base', { ...opts, metadata: { line: line.version }, network: { maskRequestHost: 'sbx.example.com\r\nX-Evil: 1' } }),
    ).rejects.toThrow('body field "network.maskRequestHost": expected a host name or IPv4 address with an optional :port');
    expect(await sandboxesOf(line)).toEqual([]);
  });
});

test('base carries what code written for E2B expects: python3 with pip, node, git, and sudo for user without a password', async () => {
  const sdk = await driver(SDK_LINES.find((l) => l.pkg === 'e2b') as SdkLine);
  const s = await sdk.create('base', urlOpts);
  const probe = await sdk.call<{ stdout: string }>(
    s.sandboxId,
    'commands.run',
    'python3 -c "print(6*7)"; pip --version | cut -d" " -f1; node -e "console.log(process.version.startsWith(\'v\'))"; git --version | cut -d" " -f1-2; sudo -n whoami',
  );
  expect(probe.stdout.split('\n')).toEqual(['42', 'pip', 'true', 'git version', 'root', '']);
  expect(await sdk.static('kill', s.sandboxId, urlOpts)).toBe(true);
});
