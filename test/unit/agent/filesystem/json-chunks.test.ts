/** The shared budget of unsent answers: reserved while built, released as written, dropped with a stalled client. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { AgentError } from '../../../../src/agent/errors';
import { ResponseBudget } from '../../../../src/agent/filesystem/fast-path';
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
  for (let i = 0; i < 300; i++) a.push(entry); // ~300 KB
  expect(a.byteLength).toBeGreaterThan(290_000);
  expect(budget.inUse).toBe(a.byteLength);
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
  const chunks = new JsonChunks(budget);
  for (let i = 0; i < 2000; i++) chunks.push(entry); // ~2 MB in ~32 chunks
  const total = chunks.byteLength;
  const res = stuckResponse(3);
  await chunks.writeTo(res, 200);
  expect(res.destroyed).toBe(true);
  expect(res.written).toBeLessThan(total);
  expect(budget.inUse).toBe(total - res.written);
  chunks.dispose();
  expect(budget.inUse).toBe(0);
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
