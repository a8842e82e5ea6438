import { findSnapshot, snapshotInfo } from '../../../../src/platform/snapshots/names';
import type { SnapshotRecord } from '../../../../src/platform/snapshots/store';

function snap(snapshotID: string, createdAt: string, name?: string): SnapshotRecord {
  return {
    snapshotID,
    ...(name !== undefined ? { name } : {}),
    sandboxID: 'src',
    createdAt,
    layerDir: `/layers/${snapshotID}`,
    template: {
      templateID: snapshotID,
      buildID: snapshotID,
      layers: [`/layers/${snapshotID}`],
      memoryMB: 512,
      cpuCount: 1,
      envs: {},
      user: 'user',
    },
  };
}

test('the wire form carries the default tag on the ID and on the name, and no names when it has none', () => {
  expect(snapshotInfo(snap('abc', '2026-01-01T00:00:00Z', 'mine'))).toEqual({ snapshotID: 'abc:default', names: ['mine:default'] });
  expect(snapshotInfo(snap('abc', '2026-01-01T00:00:00Z'))).toEqual({ snapshotID: 'abc:default', names: [] });
});

test('found by ID or by name, with or without the tag; a name means its newest snapshot', () => {
  const all = [
    snap('old', '2026-01-01T00:00:00Z', 'mine'),
    snap('new', '2026-01-02T00:00:00Z', 'mine'),
    snap('other', '2026-01-03T00:00:00Z'),
  ];
  expect(findSnapshot(all, 'old')?.snapshotID).toBe('old');
  expect(findSnapshot(all, 'old:default')?.snapshotID).toBe('old');
  expect(findSnapshot(all, 'mine')?.snapshotID).toBe('new');
  expect(findSnapshot(all, 'mine:default')?.snapshotID).toBe('new');
  expect(findSnapshot(all, 'missing')).toBeUndefined();
  expect(findSnapshot(all, 'old:v2')).toBeUndefined();
});
