/** The build limits' pure parts: log lines cut, the log volume kept, the queue of builds waiting for a slot. */
import { loadStackConfig, parseStackConfig } from '../../../../src/config';
import { BuildLog, cutLine } from '../../../../src/platform/templates/build-log';
import { BuildSlots, SlotsClosed } from '../../../../src/platform/templates/build-slots';
import type { TemplateStore } from '../../../../src/platform/templates/store';
import type { LogEntry } from '../../../../src/platform/templates/wire';

test('a line longer than the cap is cut with a marker naming the limit; a short one is kept as it is', () => {
  expect(cutLine('short', 16)).toBe('short');
  expect(cutLine('x'.repeat(40), 16)).toBe(
    `${'x'.repeat(16)} [... 24 more bytes cut: lines are kept up to 16 bytes (builds.logLineBytes)]`,
  );
  expect(cutLine('x'.repeat(10), 16, 5000)).toBe(
    `${'x'.repeat(10)} [... 5000 more bytes cut: lines are kept up to 16 bytes (builds.logLineBytes)]`,
  );
  expect(cutLine('ééé', 5)).toMatch(/^éé \[\.\.\. 2 more bytes cut/);
});

/** A store that keeps the appended entries (what Redis would hold). */
function sink(): { store: TemplateStore; stored: LogEntry[] } {
  const stored: LogEntry[] = [];
  return { stored, store: { appendLog: async (_id: string, e: LogEntry) => void stored.push(e) } as unknown as TemplateStore };
}

test("output past the volume cap is not kept, after one marker; the builder's own lines and the tail still are", async () => {
  const { store, stored } = sink();
  const log = new BuildLog(store, 'b1', { lineBytes: 100, totalBytes: 1000 });
  log.write('info', '[1/1] RUN flood', '1');
  for (let i = 0; i < 500; i++) log.output('info', `line ${String(i).padStart(4, '0')} ${'y'.repeat(40)}`, '1');
  log.write('error', 'Build failed: step 1 failed', '1');
  await log.flush();
  const outputBytes = stored.filter((e) => e.message.startsWith('line ')).reduce((n, e) => n + Buffer.byteLength(e.message), 0);
  expect(outputBytes).toBeLessThanOrEqual(1000);
  expect(outputBytes).toBeGreaterThan(900);
  const marker = stored.findIndex((e) => e.message.startsWith('Log limit reached'));
  expect(stored[marker]!.message).toBe(
    "Log limit reached: this build's output past 1000 bytes is not kept (builds.logBytes); the build goes on",
  );
  expect(stored.slice(marker + 1).map((e) => e.message)).toEqual(['Build failed: step 1 failed']);
  expect(log.lastOf('1', 2).map((e) => e.message)).toEqual([`line 0499 ${'y'.repeat(40)}`, 'Build failed: step 1 failed']);
});

test('builds beyond the slots wait in order, told how many are ahead; closing refuses the waiting ones', async () => {
  const slots = new BuildSlots(2);
  const told: Record<string, number[]> = { c: [], d: [] };
  const a = await slots.acquire();
  const b = await slots.acquire();
  const started: string[] = [];
  const c = slots.acquire((n) => told.c!.push(n)).then((r) => (started.push('c'), r));
  const d = slots.acquire((n) => told.d!.push(n)).then((r) => (started.push('d'), r));
  expect([slots.running, slots.waiting]).toEqual([2, 2]);
  a();
  a(); // a second release of the same slot changes nothing
  const releaseC = await c;
  expect(started).toEqual(['c']);
  expect(told).toEqual({ c: [0], d: [1, 0] });
  expect([slots.running, slots.waiting]).toEqual([2, 1]);
  const e = slots.acquire();
  slots.close();
  await expect(e).rejects.toThrow(SlotsClosed);
  await expect(d).rejects.toThrow('the platform stopped before this build could start');
  b();
  releaseC();
  expect(slots.running).toBe(0);
  await expect(slots.acquire()).rejects.toThrow('the platform is stopping');
});

test('the build limits are stack keys: defaults, strings from the CLI, and each bad value named with what it accepts', () => {
  expect(loadStackConfig({}).builds).toEqual({
    deadlineSeconds: 3600,
    logLineBytes: 16384,
    logBytes: 8388608,
    concurrent: 2,
    stepDiskMB: 10240,
  });
  expect(loadStackConfig({ builds: { concurrent: '4', deadlineSeconds: '600' } }).builds).toMatchObject({
    concurrent: 4,
    deadlineSeconds: 600,
  });
  const result = parseStackConfig({ builds: { deadlineSeconds: 5, logLineBytes: 'big', logBytes: 1, concurrent: 0, parallel: 3 } });
  expect(result.ok ? [] : result.issues).toEqual([
    { key: 'sandbox-kit:builds.deadlineSeconds', given: '5', expected: 'a time in seconds, an integer from 60 to 86400' },
    { key: 'sandbox-kit:builds.logLineBytes', given: '"big"', expected: 'a size in bytes, an integer from 256 to 1048576' },
    { key: 'sandbox-kit:builds.logBytes', given: '1', expected: 'a size in bytes, an integer from 65536 to 1073741824' },
    { key: 'sandbox-kit:builds.concurrent', given: '0', expected: 'an integer from 1 to 64' },
    expect.objectContaining({ key: 'sandbox-kit:builds.parallel' }),
  ]);
});
