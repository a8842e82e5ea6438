import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathHolds } from '../../../src/util/path-holds';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sk-holds-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a claim holds paths that exist and refuses, holding nothing, when one is gone', async () => {
  const holds = new PathHolds();
  const a = join(dir, 'a');
  fs.mkdirSync(a);
  const release = await holds.claim([a]);
  expect(release).toBeDefined();
  expect(holds.isHeld(a)).toBe(true);
  expect(await holds.claim([a, join(dir, 'missing')])).toBeUndefined();
  release?.();
  release?.();
  expect(holds.isHeld(a)).toBe(false);
  expect(holds.size).toBe(0);
});

test('a held directory covers what is under it, and a path holding a held one is held too', () => {
  const holds = new PathHolds();
  const release = holds.hold([join(dir, 'store')]);
  expect(holds.isHeld(join(dir, 'store', 'layers', 'x'))).toBe(true);
  expect(holds.isHeld(dir)).toBe(true);
  expect(holds.isHeld(join(dir, 'store2'))).toBe(false);
  release();
  const inner = holds.hold([join(dir, 'a', 'b')]);
  expect(holds.isHeld(join(dir, 'a'))).toBe(true);
  inner();
});

test('two holds of one path: it stays held until both are released', () => {
  const holds = new PathHolds();
  const p = join(dir, 'p');
  const one = holds.hold([p]);
  const two = holds.hold([p]);
  one();
  expect(holds.isHeld(p)).toBe(true);
  two();
  expect(holds.isHeld(p)).toBe(false);
});

test('a tracker sees holds that were there when it started and holds taken and released since; not those released before', () => {
  const holds = new PathHolds();
  const before = holds.hold([join(dir, 'before')]);
  const gone = holds.hold([join(dir, 'gone')]);
  gone();
  const tracker = holds.track();
  before();
  holds.hold([join(dir, 'later')])();
  expect(tracker.seen(join(dir, 'before'))).toBe(true);
  expect(tracker.seen(join(dir, 'later'))).toBe(true);
  expect(tracker.seen(join(dir, 'gone'))).toBe(false);
  expect(tracker.covered(join(dir, 'later', 'x'))).toBe(true);
  expect(tracker.covered(dir)).toBe(false);
  tracker.stop();
  holds.hold([join(dir, 'after-stop')]);
  expect(tracker.seen(join(dir, 'after-stop'))).toBe(false);
});

test('a claim waits for an exclusive section: a path moved inside it is not claimed', async () => {
  const holds = new PathHolds();
  const p = join(dir, 'layer');
  fs.mkdirSync(p);
  let moved = false;
  const section = holds.exclusive(async () => {
    await new Promise((r) => setTimeout(r, 50));
    if (!holds.isHeld(p)) {
      fs.renameSync(p, join(dir, 'trash'));
      moved = true;
    }
  });
  const claimed = await holds.claim([p]);
  await section;
  expect(moved).toBe(true);
  expect(claimed).toBeUndefined();
});
