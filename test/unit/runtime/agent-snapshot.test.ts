import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  agentSnapshotArgs,
  agentSnapshotProblem,
  manifestProblem,
  snapshotFiles,
  snapshotManifest,
  type SnapshotManifest,
} from '../../../src/runtime/agent-snapshot';

const wanted: SnapshotManifest = { node: { path: '/usr/bin/node', size: 1000, mtimeMs: 5 }, flags: ['--a=1', '--b=2'] };

describe('whether a startup snapshot fits the node and flags the agent runs with', () => {
  test('only a manifest naming the same binary, unchanged, and the same flags in order', () => {
    expect(manifestProblem(structuredClone(wanted), wanted)).toBeUndefined();
    const other = (change: (m: SnapshotManifest) => void) => {
      const m = structuredClone(wanted);
      change(m);
      return manifestProblem(m, wanted);
    };
    expect(other((m) => (m.node.path = '/opt/node'))).toBe('it was made by /opt/node, the agent runs /usr/bin/node');
    expect(other((m) => (m.node.size = 999))).toBe('/usr/bin/node has changed since it was made (size or modification time)');
    expect(other((m) => (m.node.mtimeMs = 6))).toBe('/usr/bin/node has changed since it was made (size or modification time)');
    expect(other((m) => (m.flags = ['--b=2', '--a=1']))).toBe(
      'it was made under the flags "--b=2 --a=1", the agent runs under "--a=1 --b=2"',
    );
    expect(other((m) => (m.flags = []))).toBe('it was made under the flags "", the agent runs under "--a=1 --b=2"');
  });

  test('anything that is not a manifest is refused, not trusted', () => {
    for (const found of [null, 'x', 3, {}, { node: wanted.node }, { flags: [] }, { node: { ...wanted.node, size: '1000' }, flags: [] }])
      expect(manifestProblem(found, wanted)).toBe('its manifest is not one the bundle step writes');
  });

  test('a bundle directory: the snapshot and a manifest for this node are both needed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skt-snapshot-unit-'));
    try {
      const files = snapshotFiles('agent');
      expect(files).toEqual({ blob: 'agent.snapshot', manifest: 'agent.snapshot.json' });
      expect(agentSnapshotProblem(dir, process.execPath, ['--x'])).toBe(`${join(dir, 'agent.snapshot')} is missing`);
      writeFileSync(join(dir, files.blob), 'blob');
      expect(agentSnapshotProblem(dir, process.execPath, ['--x'])).toMatch(/^.*agent\.snapshot\.json: ENOENT/);
      writeFileSync(join(dir, files.manifest), '{"node":');
      expect(agentSnapshotProblem(dir, process.execPath, ['--x'])).toMatch(/agent\.snapshot\.json: .*JSON/);
      writeFileSync(join(dir, files.manifest), JSON.stringify(snapshotManifest(process.execPath, ['--x'])));
      expect(agentSnapshotProblem(dir, process.execPath, ['--x'])).toBeUndefined();
      expect(agentSnapshotArgs(dir, process.execPath, ['--x'])).toEqual(['--snapshot-blob', join(dir, 'agent.snapshot')]);
      expect(agentSnapshotArgs(dir, process.execPath, ['--y'])).toEqual([]);
      expect(agentSnapshotProblem(dir, process.execPath, ['--y'])).toBe(
        `${join(dir, 'agent.snapshot')}: it was made under the flags "--x", the agent runs under "--y"`,
      );
      expect(agentSnapshotProblem(dir, join(dir, 'no-node'), ['--x'])).toMatch(/^node binary .*no-node: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
