/**
 * The platform's lifecycle logic driven by the unmodified E2B SDK, over a stand-in host (FakeHost) so it runs
 * without root; the same flows against the real runtime are in sdk-real.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryCatalog } from '../../../src/catalog/memory';
import { freePort } from '../../helpers/free-port';
import { startPlatform, type RunningPlatform } from '../../../src/platform';
import type { TemplateForSandbox } from '../../../src/platform/sandboxes/template-resolver';
import { hashAccessToken } from '../../../src/contract';
import { FakeHost } from './helpers/fake-host';
import { SdkDriver } from './helpers/sdk-driver';

const templates: Record<string, Partial<TemplateForSandbox>> = {
  base: {},
  served: { startCmd: 'serve forever', readyCmd: 'true', envs: { FROM_TEMPLATE: '1', OVERRIDE: 'template' } },
  crashing: { startCmd: 'exit 3', readyCmd: 'false' },
  never: { startCmd: 'serve forever', readyCmd: 'false' },
  // The stand-in agent keeps a command it does not know running.
  hanging: { startCmd: 'serve forever', readyCmd: 'hang' },
  late: { startCmd: 'serve forever', readyCmd: 'false-then-hang' },
};

function resolver() {
  return {
    routes: [],
    resolver: {
      async resolve(name: string): Promise<TemplateForSandbox | undefined> {
        const t = templates[name];
        if (!t) return undefined;
        return {
          templateID: `${name}-id`,
          alias: name,
          buildID: 'b1',
          // The fake host ignores layers; they must exist, as a create holds them against the storage collector.
          layers: [__dirname],
          memoryMB: 256,
          cpuCount: 1,
          envs: {},
          user: 'user',
          workdir: '/home/user',
          ...t,
        };
      },
      names: async () => Object.keys(templates),
    },
  };
}

describe('platform lifecycle through the E2B SDK', () => {
  let stateDir: string;
  let host: FakeHost;
  let catalog: MemoryCatalog;
  let platform: RunningPlatform;
  let opts: { apiKey: string; apiUrl: string };
  let sdk: SdkDriver;

  const start = () =>
    startPlatform({
      stateDir,
      runtime: host.runtimeView(),
      network: host.networkView(),
      catalog,
      templates: resolver,
      agentPort: host.agentPort,
      readyTimeoutMs: 3000,
      healthTimeoutMs: 5000,
    });

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'skp-'));
    host = new FakeHost(await freePort());
    catalog = new MemoryCatalog();
    platform = await start();
    opts = { apiKey: platform.apiKey, apiUrl: platform.url };
    sdk = await SdkDriver.start();
  });

  afterAll(async () => {
    await sdk?.close();
    await platform?.close({ killSandboxes: true });
    await host?.closeAll();
    await rm(stateDir, { recursive: true, force: true });
  });

  const raw = (method: string, path: string, body?: string, key = platform.apiKey) =>
    fetch(`${platform.url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });

  const detailOf = async (sandboxID: string) => (await (await raw('GET', `/sandboxes/${sandboxID}`)).json()) as Record<string, unknown>;

  // Each test makes its own sandboxes; whatever one leaves (a failure midway) does not reach the next.
  afterEach(async () => {
    host.full = undefined;
    for (const r of await platform.sandboxes.all()) await platform.sandboxes.kill(r.sandboxID).catch(() => undefined);
  });

  it("create starts the template's commands and initialises the agent with the token it hands out, template env under the caller's", async () => {
    const before = host.commands.length;
    const a = await sdk.create('served', { ...opts, metadata: { suite: 'create' }, envs: { OVERRIDE: 'caller' }, timeoutMs: 120_000 });
    expect(a.sandboxId).toMatch(/^[a-z0-9]{20}$/);
    const detail = await detailOf(a.sandboxId);
    expect(host.sandbox(a.sandboxId).inits).toEqual([
      {
        accessToken: detail.envdAccessToken,
        envVars: { FROM_TEMPLATE: '1', OVERRIDE: 'caller' },
        defaultUser: 'user',
        defaultWorkdir: '/home/user',
      },
    ]);
    expect(detail).toMatchObject({
      sandboxID: a.sandboxId,
      templateID: 'served-id',
      alias: 'served',
      state: 'running',
      cpuCount: 1,
      memoryMB: 256,
      envdVersion: '0.6.4',
      clientID: 'sandbox-kit',
      metadata: { suite: 'create' },
    });
    expect(Date.parse(detail.endAt as string) - Date.parse(detail.startedAt as string)).toBe(120_000);
    // The start command runs, then the ready command.
    expect(host.commands.slice(before, before + 2)).toEqual(['serve forever', 'true']);
  });

  it('create publishes the sandbox to the catalog: its address, agent port and the hash of its token', async () => {
    const a = await sdk.create('base', opts);
    const detail = await detailOf(a.sandboxId);
    expect(catalog.get(a.sandboxId)).toEqual({
      sandboxID: a.sandboxId,
      host: host.sandbox(a.sandboxId).spec.network.address,
      agentPort: host.agentPort,
      tokenHash: hashAccessToken(detail.envdAccessToken as string),
      state: 'running',
      autoResume: false,
    });
  });

  it('list filters by metadata and pages through x-next-token', async () => {
    const a = await sdk.create('base', { ...opts, metadata: { suite: 'list', n: '1' } });
    const b = await sdk.create('base', { ...opts, metadata: { suite: 'list', n: '2' } });
    const pages = await sdk.list({ ...opts, limit: 1, query: { metadata: { suite: 'list' } } }, 3);
    expect(pages.map((p) => [p.items.length, p.hasNext])).toEqual([
      [1, true],
      [1, false],
    ]);
    expect(new Set(pages.map((p) => p.items[0].sandboxId))).toEqual(new Set([a.sandboxId, b.sandboxId]));
    const [only2] = await sdk.list({ ...opts, query: { metadata: { suite: 'list', n: '2' } } });
    expect(only2.items.map((s) => s.sandboxId)).toEqual([b.sandboxId]);
  });

  it('getInfo shows the sandbox as the SDK reads it', async () => {
    const a = await sdk.create('served', { ...opts, metadata: { suite: 'info' } });
    expect(await sdk.call<Record<string, unknown>>(a.sandboxId, 'getInfo')).toMatchObject({
      sandboxId: a.sandboxId,
      templateId: 'served-id',
      name: 'served',
      state: 'running',
      metadata: { suite: 'info' },
    });
  });

  it('pause answers true, then false when already paused; the sandbox is paused in its info, the catalog and a state-filtered list', async () => {
    const a = await sdk.create('base', opts);
    expect(await sdk.call(a.sandboxId, 'pause')).toBe(true);
    expect(await sdk.call(a.sandboxId, 'pause')).toBe(false);
    expect((await sdk.call<{ state: string }>(a.sandboxId, 'getInfo')).state).toBe('paused');
    expect(catalog.get(a.sandboxId)?.state).toBe('paused');
    const [pausedList] = await sdk.list({ ...opts, query: { state: ['paused'] } });
    expect(pausedList.items.map((s) => s.sandboxId)).toEqual([a.sandboxId]);
  });

  it('connect resumes a paused sandbox: running again, the agent initialised again with the token it holds', async () => {
    const a = await sdk.create('served', opts);
    const fake = host.sandbox(a.sandboxId);
    const token = (await detailOf(a.sandboxId)).envdAccessToken;
    await sdk.call(a.sandboxId, 'pause');
    await sdk.connect(a.sandboxId, opts);
    expect((await sdk.call<{ state: string }>(a.sandboxId, 'getInfo')).state).toBe('running');
    expect(catalog.get(a.sandboxId)?.state).toBe('running');
    expect(fake.inits).toHaveLength(2);
    expect(fake.inits[1]).toEqual(fake.inits[0]);
    expect((await detailOf(a.sandboxId)).envdAccessToken).toBe(token);
  });

  it('connect on a running sandbox answers 200', async () => {
    const a = await sdk.create('base', opts);
    expect((await raw('POST', `/v2/sandboxes/${a.sandboxId}/connect`, '{"timeout":10}')).status).toBe(200);
  });

  it('setTimeout moves the end to that long from now', async () => {
    const a = await sdk.create('base', { ...opts, timeoutMs: 120_000 });
    await sdk.call(a.sandboxId, 'setTimeout', 30_000);
    const moved = await sdk.call<{ endAt: string }>(a.sandboxId, 'getInfo');
    expect(Date.parse(moved.endAt) - Date.now()).toBeLessThanOrEqual(30_000);
    expect(Date.parse(moved.endAt) - Date.now()).toBeGreaterThan(20_000);
  });

  it('kill removes the sandbox from the API, the catalog and the host; a second kill answers false', async () => {
    const a = await sdk.create('base', opts);
    expect(await sdk.call(a.sandboxId, 'kill')).toBe(true);
    await expect(sdk.call(a.sandboxId, 'getInfo')).rejects.toThrow(/^SandboxNotFoundError/);
    expect(await sdk.static('kill', a.sandboxId, opts)).toBe(false);
    expect(catalog.get(a.sandboxId)).toBeUndefined();
    expect(host.sandboxes.has(a.sandboxId)).toBe(false);
    expect(host.attachments.has(a.sandboxId)).toBe(false);
  });

  it('kills a sandbox when its timeout passes', async () => {
    const killed = await sdk.create('base', { ...opts, timeoutMs: 1000 });
    await waitFor(async () => !host.sandboxes.has(killed.sandboxId));
    await expect(sdk.call(killed.sandboxId, 'getInfo')).rejects.toThrow(/^SandboxNotFoundError/);
    expect(catalog.get(killed.sandboxId)).toBeUndefined();
  });

  it('pauses a sandbox created with auto-pause when its timeout passes', async () => {
    const paused = await sdk.create('base', { ...opts, timeoutMs: 1000, lifecycle: { onTimeout: 'pause' } });
    await waitFor(async () => host.sandboxes.get(paused.sandboxId)?.state === 'paused');
    expect((await sdk.call<{ state: string }>(paused.sandboxId, 'getInfo')).state).toBe('paused');
    expect(catalog.get(paused.sandboxId)?.state).toBe('paused');
  });

  it('refuses a wrong API key', async () => {
    const wrong = { ...opts, apiKey: 'sk_not_the_key_1' };
    await expect(sdk.create('base', wrong)).rejects.toThrow(/^AuthenticationError/);
    await expect(sdk.list(wrong)).rejects.toThrow(/^AuthenticationError/);
  });

  it('a create that cannot succeed says why and leaves nothing behind', async () => {
    await expect(sdk.create('no-such-template', opts)).rejects.toThrow('404: template "no-such-template" not found');
    await expect(sdk.create('crashing', opts)).rejects.toThrow(
      /start command "exit 3" exited with code 3 before the sandbox was ready.*ran exit 3/,
    );
    await expect(sdk.create('never', opts)).rejects.toThrow(
      /ready command "false" did not succeed within 3000 ms \(last: exit code 1; last output: ran false\)/,
    );
    await expect(sdk.create('hanging', opts)).rejects.toThrow(
      /ready command "hang" did not succeed within 3000 ms \(last: the command was still running after \d+ ms and was stopped\)/,
    );
    // An attempt stopped at the deadline leaves the answer to the last one that finished.
    await expect(sdk.create('late', opts)).rejects.toThrow(
      /ready command "false-then-hang" did not succeed within 3000 ms \(last: exit code 1; last output: ran false-then-hang\)/,
    );
    host.failCreate = new Error('crun: executable file not found in $PATH');
    await expect(sdk.create('base', opts)).rejects.toThrow(
      'could not start a sandbox from template "base": crun: executable file not found in $PATH',
    );
    expect(host.sandboxes.size).toBe(0);
    expect(host.attachments.size).toBe(0);
    expect(await platform.sandboxes.all()).toEqual([]);
  });

  it("a create the host's admission refuses is a 429 before anything is made for it; with room again it succeeds", async () => {
    host.full = 'the host cannot take this sandbox now: CPUs: 1 asked, 2 of 2 committed (host 1 × cpuOvercommit 2)';
    const attaches = host.attachesMade;
    const refused = await raw('POST', '/sandboxes', JSON.stringify({ templateID: 'base', timeout: 60 }));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^cannot create sandbox [a-z0-9]{20}: the host cannot take this sandbox now: CPUs: 1 asked/,
    );
    // No network attachment was made and removed for it, no container, no record.
    expect(host.attachesMade).toBe(attaches);
    expect(host.sandboxes.size).toBe(0);
    expect(await platform.sandboxes.all()).toEqual([]);
    host.full = undefined;
    const a = await sdk.create('base', opts);
    expect(host.attachesMade).toBe(attaches + 1);
    expect((await platform.sandboxes.all()).map((r) => r.sandboxID)).toEqual([a.sandboxId]);
  });

  it('a sandbox paused to disk on a full host: its resume is a 429 and it stays paused on disk; with room it resumes', async () => {
    const a = await sdk.create('base', opts);
    expect((await raw('POST', `/sandboxes/${a.sandboxId}/pause`, JSON.stringify({ memory: false }))).status).toBe(204);
    expect((await platform.sandboxes.get(a.sandboxId)).pausedTo).toBe('disk');
    host.full = 'the host cannot take this sandbox now: memory: 256 MB asked, 512 of 512 MB committed';
    const attaches = host.attachesMade;
    const refused = await raw('POST', `/sandboxes/${a.sandboxId}/connect`, JSON.stringify({ timeout: 60 }));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toBe(
      `sandbox "${a.sandboxId}" could not be started again from its files: ${host.full}`,
    );
    expect(host.attachesMade).toBe(attaches);
    expect(host.sandboxes.has(a.sandboxId)).toBe(false);
    expect(await platform.sandboxes.get(a.sandboxId)).toMatchObject({ state: 'paused', pausedTo: 'disk' });
    host.full = undefined;
    const resumed = await raw('POST', `/sandboxes/${a.sandboxId}/connect`, JSON.stringify({ timeout: 60 }));
    expect(resumed.status).toBe(201);
    expect(host.attachesMade).toBe(attaches + 1);
    expect(host.sandbox(a.sandboxId).spec.restart).toBe(true);
    expect(await platform.sandboxes.get(a.sandboxId)).toMatchObject({ state: 'running' });
  });

  it('a malformed request is a 400 naming each bad field and what it accepts; an unknown sandbox a 404', async () => {
    const malformed = await raw('POST', '/v2/sandboxes', '{"templateID":');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ code: 400, message: expect.stringContaining('not valid JSON') });
    const types = await raw('POST', '/v2/sandboxes', '{"templateID":5,"metadata":{"a":1},"timeout":"10"}');
    expect(types.status).toBe(400);
    const message = ((await types.json()) as { message: string }).message;
    expect(message).toContain('body field "templateID"');
    expect(message).toContain('body field "metadata.a"');
    expect(message).toContain('body field "timeout": expected a whole number of seconds (given "10")');
    const range = await raw('POST', '/v2/sandboxes', '{"templateID":"base","timeout":86401}');
    expect(await range.json()).toEqual({ code: 400, message: 'body field "timeout": expected 1 to 86400 seconds (given 86401)' });
    const zero = await raw('POST', '/sandboxes/whatever/timeout', '{"timeout":0}');
    expect(zero.status).toBe(400);
    const unknown = await raw('DELETE', '/sandboxes/nosuchsandbox');
    expect(await unknown.json()).toEqual({ code: 404, message: 'sandbox "nosuchsandbox" not found' });
    const badToken = await raw('GET', '/v2/sandboxes?nextToken=garbage');
    expect(badToken.status).toBe(400);
    const badState = await raw('GET', '/v2/sandboxes?state=running,gone');
    expect(((await badState.json()) as { message: string }).message).toContain('query field "state.1"');
    expect(await platform.sandboxes.all()).toEqual([]);
  });

  it('finds its sandboxes again after a restart and removes what is half-made or left over', async () => {
    const kept = await sdk.create('served', { ...opts, metadata: { restart: 'yes' } });
    const died = await sdk.create('base', opts);
    const expiring = await sdk.create('base', { ...opts, timeoutMs: 4000 });
    // Then, as if the platform died: one sandbox died, one create was cut short, one container is nobody's.
    await host.kill(died.sandboxId);
    const { SandboxStore } = await import('../../../src/platform/sandboxes/store');
    await new SandboxStore(platform.redis).put(halfMade('halfmadesandbox00001'));
    await host.networkView().attach('halfmadesandbox00001');
    await host.runtimeView().create({
      sandboxID: 'orphancontainer00001',
      layers: [],
      memoryMB: 1,
      cpuCount: 1,
      network: await host.networkView().attach('orphancontainer00001'),
    });
    await platform.close();
    catalog = new MemoryCatalog();
    platform = await start();
    opts = { apiKey: platform.apiKey, apiUrl: platform.url };

    expect((await platform.sandboxes.all()).map((r) => r.sandboxID).sort()).toEqual([kept.sandboxId, expiring.sandboxId].sort());
    // The timers come back from the store: the short-lived one still ends on time.
    // Its record goes last, after its container and network: once the record is gone, so is the rest.
    await waitFor(async () => !(await platform.sandboxes.all()).some((r) => r.sandboxID === expiring.sandboxId));
    expect((await platform.sandboxes.all()).map((r) => r.sandboxID)).toEqual([kept.sandboxId]);
    expect([...host.sandboxes.keys()]).toEqual([kept.sandboxId]);
    expect([...host.attachments.keys()]).toEqual([kept.sandboxId]);
    expect(catalog.get(kept.sandboxId)?.state).toBe('running');
    // The same key still works and the sandbox is there with its token.
    const info = await sdk.static<{ metadata: unknown }>('getInfo', kept.sandboxId, opts);
    expect(info.metadata).toEqual({ restart: 'yes' });
    expect(await sdk.static('kill', kept.sandboxId, opts)).toBe(true);
  });
});

function halfMade(sandboxID: string) {
  return {
    sandboxID,
    templateID: 'base-id',
    envdAccessToken: 'x'.repeat(40),
    state: 'creating' as const,
    startedAt: new Date().toISOString(),
    endAt: new Date(Date.now() + 60_000).toISOString(),
    cpuCount: 1,
    memoryMB: 256,
    metadata: {},
    envVars: {},
    templateEnvs: {},
    autoPause: false,
    autoResume: false,
    agentPort: 49983,
    defaultUser: 'user',
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
