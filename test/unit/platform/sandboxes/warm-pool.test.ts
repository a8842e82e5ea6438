import { poolTemplateRef, sameBuild, WarmPool, type PooledSandbox } from '../../../../src/platform/sandboxes/warm-pool';
import { waitFor } from '../../../../src/util/poll';
import type { TemplateForSandbox } from '../../../../src/platform/sandboxes/template-resolver';

const build: TemplateForSandbox = {
  templateID: 't1',
  alias: 'web',
  buildID: 'b1',
  layers: ['/layers/a', '/layers/base'],
  memoryMB: 512,
  cpuCount: 1,
  envs: { A: '1' },
  user: 'user',
};

describe('sameBuild: which pooled sandboxes a create may take', () => {
  it('takes one of the same template, build, layers, memory, CPUs and disk', () => {
    expect(sameBuild(build, { ...build, layers: [...build.layers] })).toBe(true);
  });

  it('never one of another build, template, layer stack or size', () => {
    for (const other of [
      { ...build, buildID: 'b2' },
      { ...build, templateID: 't2' },
      { ...build, layers: ['/layers/mcp', ...build.layers] },
      { ...build, layers: [build.layers[1] as string, build.layers[0] as string] },
      { ...build, memoryMB: 1024 },
      { ...build, cpuCount: 2 },
      { ...build, diskSizeMB: 2048 },
    ])
      expect(sameBuild(build, other)).toBe(false);
  });
});

describe('poolTemplateRef: whose template a pool names', () => {
  it('a bare name is resolved as the default team; TEAM/TEMPLATE as that team', () => {
    expect(poolTemplateRef('base')).toEqual({ ref: 'base' });
    expect(poolTemplateRef('acme/web')).toEqual({ team: 'acme', ref: 'web' });
  });
});

describe('WarmPool: room for creates the host refuses, and its counts', () => {
  const web = build;
  const api: TemplateForSandbox = { ...build, templateID: 't2', alias: 'api', buildID: 'b9' };
  let pool: WarmPool | undefined;
  let n = 0;
  let started: string[] = [];
  /** When each fill began (performance.now()). */
  let startedAt: number[] = [];
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    started = [];
    startedAt = [];
  });

  function makePool(sizes: Record<string, number>, gate?: () => Promise<void>, refillAfterTakeMs = 0): WarmPool {
    const templates: Record<string, TemplateForSandbox> = { web, api };
    pool = new WarmPool({
      sizes: new Map(Object.entries(sizes)),
      resolve: async (name) => templates[name],
      start: async (template): Promise<PooledSandbox> => {
        startedAt.push(performance.now());
        await gate?.();
        const sandboxID = `s${++n}`;
        started.push(sandboxID);
        return { sandboxID, address: '10.0.0.1', token: 't', template, readyAt: n };
      },
      alive: async () => true,
      discard: async () => undefined,
      log: () => undefined,
      checkEveryMs: 20,
      refillAfterTakeMs,
    });
    return pool;
  }

  const full = (p: WarmPool, counts: Record<string, number>) =>
    waitFor('a full pool', () => (JSON.stringify(p.counts()) === JSON.stringify(counts) ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 5,
    });

  it("evicts the other templates' sandboxes first (the longest ready first), then the create's own, then none", async () => {
    const p = makePool({ web: 2, api: 2 });
    p.start();
    await full(p, { web: 2, api: 2 });
    const release = p.holdFills();
    const members = p.members();
    const [api1, api2] = (members.api ?? []).map((s) => s.sandboxID);
    const [web1, web2] = (members.web ?? []).map((s) => s.sandboxID);
    expect([p.evict(web)?.sandboxID, p.evict(web)?.sandboxID]).toEqual([api1, api2]);
    expect([p.evict(web)?.sandboxID, p.evict(web)?.sandboxID]).toEqual([web1, web2]);
    expect(p.evict(web)).toBeUndefined();
    expect(p.statistics()).toMatchObject({ web: { evictions: 2, ready: 0 }, api: { evictions: 2, ready: 0 } });
    release();
    await full(p, { web: 2, api: 2 });
  });

  it('starts nothing while a create holds the fills; refills once it releases them', async () => {
    const p = makePool({ web: 1 });
    p.start();
    await full(p, { web: 1 });
    const release = p.holdFills();
    expect(p.take(web)).toBeDefined();
    const before = started.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(started.length).toBe(before);
    expect(p.counts()).toEqual({ web: 0 });
    release();
    release();
    await full(p, { web: 1 });
  });

  it("after takes, no fill starts during the first take's head start; then the pool refills", async () => {
    const headStart = 150;
    const p = makePool({ web: 2 }, undefined, headStart);
    p.start();
    await full(p, { web: 2 });
    const fills = startedAt.length;
    const takenAt = performance.now();
    expect(p.take(web)).toBeDefined();
    expect(p.take(web)).toBeDefined();
    await full(p, { web: 2 });
    const refills = startedAt.slice(fills);
    expect(refills).toHaveLength(2);
    for (const at of refills) expect(at - takenAt).toBeGreaterThanOrEqual(headStart);
  });

  it('counts takes, and misses of its template only', async () => {
    const p = makePool({ web: 1 });
    p.start();
    await full(p, { web: 1 });
    const release = p.holdFills();
    expect(p.take(web)).toBeDefined();
    expect(p.take(web)).toBeUndefined();
    expect(p.take(api)).toBeUndefined();
    expect(p.statistics()).toEqual({ web: { ready: 0, starting: 0, takes: 1, misses: 1, evictions: 0 } });
    release();
  });

  it('a create finding nothing to evict waits for the fill under way, then can evict it; with none under way it does not wait', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const p = makePool({ web: 1 }, () => gate);
    p.start();
    await waitFor('a fill under way', () => (p.statistics().web?.starting === 1 ? true : undefined), { timeoutMs: 5000, intervalMs: 5 });
    const release = p.holdFills();
    expect(p.evict(web)).toBeUndefined();
    let settled = false;
    const waiting = p.fillSettled().then((was) => {
      settled = true;
      return was;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    open();
    expect(await waiting).toBe(true);
    // Settled means in the list: evictable at once.
    expect(p.evict(web)?.sandboxID).toBe(started.at(-1));
    expect(await p.fillSettled()).toBe(false);
    release();
  });
});
