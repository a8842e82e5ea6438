import { nextPausedEvent } from '../../../../src/platform/sandboxes/paused-policy';

const policy = { toDiskAfterMs: 60_000, retentionMs: 3_600_000 };
const pausedAt = '2026-01-01T00:00:00.000Z';
const t0 = Date.parse(pausedAt);

test('a memory-paused sandbox moves to disk first, after the configured time', () => {
  expect(nextPausedEvent({ pausedTo: 'memory', pausedAt }, policy)).toEqual({ action: 'to-disk', atMs: t0 + 60_000 });
});

test('a disk-paused sandbox is killed at the end of the retention, counted from when it was paused', () => {
  expect(nextPausedEvent({ pausedTo: 'disk', pausedAt }, policy)).toEqual({ action: 'kill', atMs: t0 + 3_600_000 });
});

test('a retention shorter than the move to disk kills a memory-paused sandbox without moving it', () => {
  expect(nextPausedEvent({ pausedTo: 'memory', pausedAt }, { toDiskAfterMs: 10_000, retentionMs: 5_000 })).toEqual({
    action: 'kill',
    atMs: t0 + 5_000,
  });
});
