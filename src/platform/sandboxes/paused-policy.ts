/**
 * What happens to a paused sandbox while nobody resumes it: one frozen in memory moves to disk after `toDiskAfterMs`
 * (its RAM is freed, its files kept), and any paused sandbox is killed once it has been paused for `retentionMs`.
 * Pure: the service arms one timer at `nextPausedEvent` and acts on what it says.
 */
import type { SandboxRecord } from './record';

export interface PausedPolicy {
  toDiskAfterMs: number;
  retentionMs: number;
}

/** E2B keeps paused sandboxes for 30 days; a frozen one holds RAM, so it goes to disk after 10 minutes. */
export const DEFAULT_PAUSED_POLICY: PausedPolicy = { toDiskAfterMs: 10 * 60_000, retentionMs: 30 * 86_400_000 };

export type PausedEvent = { action: 'to-disk' | 'kill'; atMs: number };

export function nextPausedEvent(record: Pick<SandboxRecord, 'pausedTo' | 'pausedAt'>, policy: PausedPolicy): PausedEvent {
  const pausedAt = record.pausedAt !== undefined ? Date.parse(record.pausedAt) : 0;
  const killAt = pausedAt + policy.retentionMs;
  const toDiskAt = pausedAt + policy.toDiskAfterMs;
  if (record.pausedTo !== 'disk' && toDiskAt < killAt) return { action: 'to-disk', atMs: toDiskAt };
  return { action: 'kill', atMs: killAt };
}
