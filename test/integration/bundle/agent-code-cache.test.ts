import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { agentNodeFlags } from '../../../src/runtime/agent-payload';

/**
 * The agent's code cache is only worth its bytes if V8 takes it when the runtime starts the agent: the same node, the
 * same flags (V8 rejects a cache made under other heap flags and compiles the whole bundle again).
 */
describe("the agent bundle's code cache", () => {
  let dir: string;
  const complaints: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-agent-cache-'));
    const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void complaints.push(args.join(' ')));
    try {
      await bundle(bundleEntries().find((e) => e.name === 'agent')!, dir);
    } finally {
      spy.mockRestore();
    }
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Whether V8 rejects agent.js.cache when node runs with `flags`. */
  const rejected = (flags: string[]): string => {
    const check = [
      "const fs = require('fs'), vm = require('vm'), Module = require('module');",
      'const file = process.argv[1];',
      "const s = new vm.Script(Module.wrap(fs.readFileSync(file, 'latin1')), { filename: file, cachedData: fs.readFileSync(file + '.cache') });",
      'process.stdout.write(String(s.cachedDataRejected));',
    ].join('\n');
    const r = spawnSync(process.execPath, [...flags, '-e', check, join(dir, 'agent.js')], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    return r.stdout;
  };

  it('is accepted under the flags the runtime starts the agent with', () => {
    expect(rejected(agentNodeFlags())).toBe('false');
  });

  it("is made from a run of the agent that answered a create's calls, not from its --help", () => {
    expect(complaints).toEqual([]);
  });

  it('is checked by V8: other heap flags reject it', () => {
    expect(rejected([])).toBe('true');
  });
});
