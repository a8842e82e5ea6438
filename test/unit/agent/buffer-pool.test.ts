/** The ListDir's pool of 64 KiB buffers: reuse, its cap, what it refuses to keep, and the drop when idle. */
import { BufferPool, POOL_BUFFER_BYTES } from '../../../src/agent/buffer-pool';

test('a buffer given back is the next one taken; a new one is made when none is free', () => {
  const pool = new BufferPool(4);
  const a = pool.take();
  expect(a.length).toBe(POOL_BUFFER_BYTES);
  pool.give(a);
  expect(pool.take()).toBe(a);
  expect(pool.take()).not.toBe(a);
});

test('it keeps at most maxFree buffers, and none that is not a whole buffer of its size', () => {
  const pool = new BufferPool(2);
  const taken = [pool.take(), pool.take(), pool.take()];
  for (const b of taken) pool.give(b);
  expect(pool.freeCount).toBe(2);
  const other = new BufferPool(8);
  other.give(Buffer.allocUnsafeSlow(POOL_BUFFER_BYTES * 2));
  other.give(pool.take().subarray(0, 100));
  other.give(Buffer.allocUnsafeSlow(POOL_BUFFER_BYTES + 16).subarray(16));
  expect(other.freeCount).toBe(0);
});

test('a pool not taken from for its idle time drops its free buffers; one in use keeps them', () => {
  jest.useFakeTimers();
  try {
    const pool = new BufferPool(8, 60);
    const a = pool.take();
    const b = pool.take();
    pool.give(a);
    // Taken from every 20 ms, well within the idle time: the same buffer each time, never dropped.
    for (let i = 0; i < 10; i++) {
      jest.advanceTimersByTime(20);
      const again = pool.take();
      expect(again).toBe(a);
      pool.give(again);
    }
    pool.give(b);
    expect(pool.freeCount).toBe(2);
    jest.advanceTimersByTime(59);
    expect(pool.freeCount).toBe(2);
    // Idle for its whole idle time (the timer armed at the last give fires, then once more after the last take).
    jest.advanceTimersByTime(200);
    expect(pool.freeCount).toBe(0);
    expect(pool.take()).not.toBe(a);
  } finally {
    jest.useRealTimers();
  }
});
