import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, bundleEntries } from '../../../scripts/bundle';
import { agentNodeFlags } from '../../../src/runtime/agent-payload';
import { agentSnapshotProblem, snapshotFiles, snapshotManifest } from '../../../src/runtime/agent-snapshot';

/**
 * The agent's startup snapshot (src/runtime/agent-snapshot.ts), as the bundle step makes it: the agent starts from it
 * as the runtime starts it and serves; its manifest is what keeps a node that cannot load it from trying (such a node
 * exits at start); and it holds nothing of the environment of the process that made it (every sandbox can read it).
 */
describe("the agent bundle's startup snapshot", () => {
  let dir: string;
  const canary = `skt-canary-${randomBytes(8).toString('hex')}`;
  const files = snapshotFiles('agent');
  const complaints: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-agent-snapshot-'));
    process.env.SKT_SNAPSHOT_CANARY = canary;
    const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void complaints.push(args.join(' ')));
    try {
      await bundle(bundleEntries().find((e) => e.name === 'agent')!, dir);
    } finally {
      spy.mockRestore();
      delete process.env.SKT_SNAPSHOT_CANARY;
    }
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const snapshotArgs = () => [...agentNodeFlags(), '--snapshot-blob', join(dir, files.blob)];

  it("is made, with a manifest naming this node and the agent's flags, so the runtime starts the agent from it", () => {
    expect(complaints).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, files.manifest), 'utf8'))).toEqual(snapshotManifest(process.execPath, agentNodeFlags()));
    expect(agentSnapshotProblem(dir, process.execPath, agentNodeFlags())).toBeUndefined();
  });

  it('starts the agent as the runtime starts it, which then answers /health and a Stat', async () => {
    const child = spawn(process.execPath, [...snapshotArgs(), join(dir, 'run.js'), 'agent', '--host', '127.0.0.1', '--port', '0'], {
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

  it("keeps V8 taking the bundle's code cache", () => {
    const check = [
      "const fs = require('fs'), vm = require('vm'), Module = require('module');",
      'const file = process.argv[2];',
      "const s = new vm.Script(Module.wrap(fs.readFileSync(file, 'latin1')), { filename: file, cachedData: fs.readFileSync(file + '.cache') });",
      'process.stdout.write(String(s.cachedDataRejected));',
    ].join('\n');
    writeFileSync(join(dir, 'check-cache.js'), check);
    const r = spawnSync(process.execPath, [...snapshotArgs(), join(dir, 'check-cache.js'), join(dir, 'agent.js')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ stderr: r.stderr, rejected: r.stdout }).toEqual({ stderr: '', rejected: 'false' });
  });

  it('is refused by the manifest under other flags, where node itself would exit at start', () => {
    const other = ['--max-semi-space-size=2', ...agentNodeFlags().slice(1)];
    expect(agentSnapshotProblem(dir, process.execPath, other)).toMatch(
      /was made under the flags "--max-semi-space-size=1 .*", the agent runs under "--max-semi-space-size=2 /,
    );
    const r = spawnSync(process.execPath, [...other, '--snapshot-blob', join(dir, files.blob), join(dir, 'run.js'), 'agent', '--help'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(14);
    expect(r.stdout).toBe('');
  });

  it('holds nothing of the environment of the process that made it', () => {
    expect(readFileSync(join(dir, files.blob)).includes(canary)).toBe(false);
  });
});
