/**
 * The shared budget of unsent answers: whole buffers reserved while built, released as written, dropped with a stalled
 * client; the buffers go back to the ListDir's pool once written or abandoned, and the next answer reuses them.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { AgentError } from '../../../../src/agent/errors';
import { ResponseBudget } from '../../../../src/agent/filesystem/fast-path';
import { BufferPool, POOL_BUFFER_BYTES } from '../../../../src/agent/buffer-pool';
import { JsonChunks } from '../../../../src/agent/filesystem/json-chunks';

/** A response whose socket takes `accept` writes and then nothing more. */
function stuckResponse(accept: number): ServerResponse & { written: number } {
  const res = new EventEmitter() as EventEmitter & {
    written: number;
    destroyed: boolean;
    write(b: Buffer): boolean;
    end(): void;
    destroy(): void;
  };
  res.written = 0;
  res.destroyed = false;
  res.write = (b: Buffer) => {
    res.written += b.length;
    return --accept > 0;
  };
  // A write never completes: its callback is never called.
  res.end = () => {};
  res.destroy = () => {
    res.destroyed = true;
    res.emit('close');
  };
  return res as unknown as ServerResponse & { written: number };
}

const entry = `{"name":"${'x'.repeat(1000)}"}`;

test('building answers reserves bytes in the shared budget; past it the next answer is resource_exhausted', () => {
  const budget = new ResponseBudget(512 * 1024);
  const a = new JsonChunks(budget);
  for (let i = 0; i < 300; i++) a.push(entry); // ~300 KB in five buffers
  expect(a.byteLength).toBeGreaterThan(290_000);
  expect(budget.inUse).toBe(5 * POOL_BUFFER_BYTES);
  const b = new JsonChunks(budget);
  expect(() => {
    for (let i = 0; i < 300; i++) b.push(entry);
    return b.byteLength;
  }).toThrow(AgentError);
  b.dispose();
  a.dispose();
  expect(budget.inUse).toBe(0);
});

test('a client that takes nothing for the stall time is dropped, and its bytes return to the budget', async () => {
  const budget = new ResponseBudget(8 * 1024 * 1024);
  const pool = new BufferPool(256);
  const chunks = new JsonChunks(budget, pool);
  for (let i = 0; i < 2000; i++) chunks.push(entry); // ~2 MB in ~32 chunks
  const total = chunks.byteLength;
  const held = budget.inUse;
  // Whole buffers: a buffer is sealed when the next entry would not fit in what is left of it.
  expect(held % POOL_BUFFER_BYTES).toBe(0);
  expect(held).toBeGreaterThanOrEqual(total);
  expect(held).toBeLessThan(total + 4 * POOL_BUFFER_BYTES);
  const res = stuckResponse(3);
  await chunks.writeTo(res, 200);
  expect(res.destroyed).toBe(true);
  expect(res.written).toBeLessThan(total);
  expect(budget.inUse).toBe(held - 3 * POOL_BUFFER_BYTES);
  chunks.dispose();
  expect(budget.inUse).toBe(0);
  // The three the socket took were never completed: they are not given back, the unwritten ones are.
  expect(pool.freeCount).toBe(held / POOL_BUFFER_BYTES - 3);
});

test('written and abandoned buffers go back to the pool, and the next answer is built in them', async () => {
  const pool = new BufferPool(64);
  const first = new JsonChunks(undefined, pool);
  for (let i = 0; i < 200; i++) first.push(entry); // ~200 KB in four buffers
  const completions: Array<() => void> = [];
  const seen = new Set<ArrayBuffer>();
  const res = {
    write: (b: Buffer, cb: () => void) => (seen.add(b.buffer as ArrayBuffer), completions.push(cb), true),
    end: () => undefined,
    destroyed: false,
  } as never;
  await first.writeTo(res);
  expect(seen.size).toBe(4);
  // A buffer goes back only when its write completed.
  expect(pool.freeCount).toBe(0);
  for (const done of completions) done();
  expect(pool.freeCount).toBe(4);
  const second = new JsonChunks(undefined, pool);
  for (let i = 0; i < 200; i++) second.push(entry);
  expect(pool.freeCount).toBe(0);
  const borrowed = second.borrow();
  expect(seen.has(borrowed.buffer as ArrayBuffer)).toBe(false);
  second.giveBack(borrowed);
  second.dispose();
  expect(pool.freeCount).toBe(5);
});

test('a borrowed buffer is counted in the budget until given back, also after the answer is disposed', () => {
  const budget = new ResponseBudget(4 * POOL_BUFFER_BYTES);
  const pool = new BufferPool(4);
  const chunks = new JsonChunks(budget, pool);
  const a = chunks.borrow();
  const b = chunks.borrow();
  chunks.push(entry);
  expect(budget.inUse).toBe(3 * POOL_BUFFER_BYTES);
  chunks.dispose();
  expect(budget.inUse).toBe(2 * POOL_BUFFER_BYTES);
  chunks.giveBack(a);
  chunks.giveBack(b);
  expect(budget.inUse).toBe(0);
  expect(pool.freeCount).toBe(3);
});

test('the chunks hold exactly the UTF-8 of the texts pushed, across chunk borders and for a text larger than a chunk', async () => {
  const texts = ['{"entries":['];
  for (let i = 0; i < 3000; i++) texts.push(`${i === 0 ? '' : ','}{"name":"caf\u00e9-\uef80-\u{1f600}-${i}"}`);
  texts.push(`,{"name":"${'\u00fc'.repeat(100_000)}"}`, ']}');
  const chunks = new JsonChunks();
  for (const t of texts) chunks.push(t);
  const written: Buffer[] = [];
  const res = { write: (b: Buffer) => (written.push(Buffer.from(b)), true), end: () => undefined, destroyed: false } as never;
  const expected = Buffer.from(texts.join(''), 'utf8');
  expect(chunks.byteLength).toBe(expected.length);
  await chunks.writeTo(res);
  expect(written.length).toBeGreaterThan(2);
  expect(Buffer.concat(written).equals(expected)).toBe(true);
});
