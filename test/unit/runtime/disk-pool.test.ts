import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closePool, DEPTH, DiskPool, POOL_DIR, poolOf, SIZES } from '../../../src/runtime/disk-pool';

const MIB = 1024 * 1024;
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'disk-pool-'));
});

afterEach(async () => {
  await closePool(dir);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Whether `file` holds an ext4 superblock (its magic 0xEF53 at byte 1080). */
function isExt4(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(2);
    fs.readSync(fd, b, 0, 2, 1080);
    return b.readUInt16LE(0) === 0xef53;
  } finally {
    fs.closeSync(fd);
  }
}

const pooled = (pool: DiskPool) => (fs.existsSync(pool.poolDir) ? fs.readdirSync(pool.poolDir).sort() : []);

test('an empty pool gives nothing; once asked for a size it keeps DEPTH formatted images of it, each taken once', async () => {
  const pool = new DiskPool(dir);
  const image = path.join(dir, 'a.disk');
  expect(pool.take(image, 64)).toBe(false);
  expect(fs.existsSync(image)).toBe(false);

  pool.want(64);
  await pool.idle();
  const ready = pooled(pool);
  expect(ready).toHaveLength(DEPTH);
  for (const name of ready) expect(name).toMatch(/^64-[0-9a-f]{12}\.img$/);

  expect(pool.take(image, 65)).toBe(false); // another size
  expect(pool.take(image, 64)).toBe(true);
  const second = path.join(dir, 'b.disk');
  expect(pool.take(second, 64)).toBe(true);
  expect(pool.take(path.join(dir, 'c.disk'), 64)).toBe(false);
  expect(pooled(pool)).toEqual([]);
  for (const f of [image, second]) {
    const st = fs.statSync(f);
    expect(st.size).toBe(64 * MIB);
    expect(st.nlink).toBe(1);
    expect(st.blocks * 512).toBeLessThan(4 * MIB); // sparse
    expect(isExt4(f)).toBe(true);
  }
  expect(fs.statSync(image).ino).not.toBe(fs.statSync(second).ino);
});

test('a take never replaces an existing file and leaves no claimed image behind', async () => {
  const pool = new DiskPool(dir);
  pool.want(64);
  await pool.idle();
  const existing = path.join(dir, 'x.disk');
  fs.writeFileSync(existing, 'mine');
  expect(() => pool.take(existing, 64)).toThrow(/EEXIST/);
  expect(fs.readFileSync(existing, 'utf8')).toBe('mine');
  expect(pooled(pool).filter((f) => !f.endsWith('.img'))).toEqual([]);
});

test('only the most recent sizes are kept ready', async () => {
  const pool = new DiskPool(dir);
  const sizes = Array.from({ length: SIZES + 1 }, (_, i) => 64 + i);
  for (const s of sizes) {
    pool.want(s);
    await pool.idle();
  }
  // The oldest size's images stay until taken, but none are made for it any more.
  for (const name of pooled(pool)) fs.rmSync(path.join(pool.poolDir, name));
  pool.want(sizes.at(-1)!);
  await pool.idle();
  const kept = new Set(pooled(pool).map((f) => Number(f.split('-')[0])));
  expect([...kept].sort()).toEqual(sizes.slice(1).sort());
});

test('a data directory removed meanwhile is not made again by the pool', async () => {
  const pool = new DiskPool(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  pool.want(64);
  await pool.idle();
  expect(fs.existsSync(dir)).toBe(false);
});

test('closePool stops the pool and removes its images; poolOf gives one pool per directory', async () => {
  const pool = poolOf(dir);
  expect(poolOf(path.join(dir, '.'))).toBe(pool);
  pool.want(64);
  await closePool(dir);
  expect(fs.existsSync(path.join(dir, POOL_DIR))).toBe(false);
  pool.want(64);
  await pool.idle();
  expect(fs.existsSync(path.join(dir, POOL_DIR))).toBe(false);
  expect(poolOf(dir)).not.toBe(pool);
});

test('discard takes an image away at once and unlinks it in the background; a missing image is no error', async () => {
  const pool = new DiskPool(dir);
  const image = path.join(dir, 'gone.disk');
  fs.writeFileSync(image, Buffer.alloc(MIB));
  pool.discard(image);
  expect(fs.existsSync(image)).toBe(false);
  await pool.idle();
  expect(pooled(pool)).toEqual([]);
  expect(() => pool.discard(image)).not.toThrow();
  await pool.idle();
  expect(pooled(pool)).toEqual([]);
});
