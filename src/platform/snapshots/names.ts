/**
 * How a snapshot is named on the wire (pure). E2B answers a snapshot with its template ID and tag (`abc123:default`)
 * or its name and tag; a create accepts either, with or without the `:default` tag.
 */
import type { SnapshotRecord } from './store';

export const SNAPSHOT_TAG = 'default';

export function snapshotInfo(record: SnapshotRecord): { snapshotID: string; names: string[] } {
  return {
    snapshotID: `${record.snapshotID}:${SNAPSHOT_TAG}`,
    names: record.name !== undefined ? [`${record.name}:${SNAPSHOT_TAG}`] : [],
  };
}

/** The snapshot an ID or name refers to: by ID, else the newest of that name; undefined when none. */
export function findSnapshot(records: readonly SnapshotRecord[], ref: string): SnapshotRecord | undefined {
  const bare = ref.endsWith(`:${SNAPSHOT_TAG}`) ? ref.slice(0, -SNAPSHOT_TAG.length - 1) : ref;
  return (
    records.find((r) => r.snapshotID === bare) ??
    records.filter((r) => r.name === bare).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))[0]
  );
}
