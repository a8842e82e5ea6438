import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { AGENT_HEAP_MB, agentNodeFlags } from '../../../src/runtime/agent-payload';

/**
 * The agent bundle as the bundle step makes it and the runtime starts it (`node <agentNodeFlags> run.js agent`): it
 * serves, with a code cache made from a run of the agent that answered a create's calls; and its loader
 * (scripts/bundle-loader.js) gives V8's heap-size flags their defaults back once the heap is made, so that V8 takes
 * code caches made under the defaults (node's own, of its built-in modules, and the bundle's), while the agent's heap
 * keeps the limits those flags set.
 */
describe("the agent bundle and its loader's heap flags", () => {
  let dir: string;
  const complaints: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-agent-loader-'));
    const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void complaints.push(args.join(' ')));
    try {
      await bundle(bundleEntries().find((e) => e.name === 'agent')!, dir);
    } finally {
      spy.mockRestore();
    }
    // A cache made by a node under V8's default flags, as node's cache of its own modules is made.
    const made = spawnSync(
      process.execPath,
      [
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(join(dir, 'made-under-defaults.cache'))}, new (require('vm').Script)('1 + 1').createCachedData())`,
      ],
      { encoding: 'utf8', timeout: 30_000, env: {} },
    );
    expect(made.stderr).toBe('');
    // What a bundle started by the loader sees: whether V8 takes both caches, and its heap's limits under pressure.
    const probe = [
      "const fs = require('fs'), vm = require('vm'), v8 = require('v8'), Module = require('module');",
      `const dir = ${JSON.stringify(dir)};`,
      "const agent = new vm.Script(Module.wrap(fs.readFileSync(dir + '/agent.js', 'latin1')), { filename: dir + '/agent.js', cachedData: fs.readFileSync(dir + '/agent.js.cache') });",
      "const defaults = new vm.Script('1 + 1', { cachedData: fs.readFileSync(dir + '/made-under-defaults.cache') });",
      'let young = 0; const kept = [];',
      'for (let r = 0; r < 100; r++) {',
      '  for (let i = 0; i < 1e5; i++) { const o = { i, a: [i] }; if (i % 50 === 0) kept.push(o); }',
      '  if (kept.length > 1e5) kept.length = 0;',
      "  young = Math.max(young, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);",
      '}',
      'process.stdout.write(JSON.stringify({ agentCacheTaken: !agent.cachedDataRejected, defaultsCacheTaken: !defaults.cachedDataRejected,',
      '  heapLimitMiB: v8.getHeapStatistics().heap_size_limit / 2 ** 20, youngMiB: young / 2 ** 20 }));',
    ].join('\n');
    writeFileSync(join(dir, 'probe.js'), probe);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [...agentNodeFlags(), ...args], { encoding: 'utf8', timeout: 60_000, env: {} });
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { agentCacheTaken: boolean; defaultsCacheTaken: boolean; heapLimitMiB: number; youngMiB: number };
  };

  it('starts the agent as the runtime starts it, which then answers /health and a Stat', async () => {
    const child = spawn(process.execPath, [...agentNodeFlags(), join(dir, 'run.js'), 'agent', '--host', '127.0.0.1', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {},
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          const m = /listening on [^\s]*:(\d+)/.exec((out += d.toString()));
          if (m) resolve(Number(m[1]));
        });
        child.on('exit', (code) => reject(new Error(`the agent exited (${code}) before it listened: ${out}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/health`)).status).toBe(204);
      const stat = await fetch(`${base}/filesystem.Filesystem/Stat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ path: dir }),
      });
      expect(stat.status).toBe(200);
      expect(((await stat.json()) as { entry: { path: string; type: string } }).entry).toMatchObject({
        path: dir,
        type: 'FILE_TYPE_DIRECTORY',
      });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("makes the agent's code cache from a run of the agent that answered a create's calls, not from its --help", () => {
    expect(complaints).toEqual([]);
  });

  it("has V8 take caches made under the default flags, and keeps the heap within the agent's limits", () => {
    const seen = run([join(dir, 'run.js'), 'probe']);
    expect(seen).toMatchObject({ agentCacheTaken: true, defaultsCacheTaken: true });
    // The old generation's limit and the young generation's two semi-spaces of 1 MiB, as the flags set them.
    expect(seen.heapLimitMiB).toBeLessThanOrEqual(AGENT_HEAP_MB + 4);
    expect(seen.youngMiB).toBeLessThanOrEqual(2);
  });

  it('is what makes the difference: the same bundle run by node directly under the flags has both caches refused', () => {
    const seen = run([join(dir, 'probe.js')]);
    expect(seen).toMatchObject({ agentCacheTaken: false, defaultsCacheTaken: false });
    expect(seen.heapLimitMiB).toBeLessThanOrEqual(AGENT_HEAP_MB + 4);
  });
});
