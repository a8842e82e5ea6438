/**
 * A response body built as UTF-8 chunks while it is produced: the only copy of a large ListDir response is this
 * list of 64 KiB buffers (no array of entry objects, no one big string), taken from the agent's pool
 * (buffer-pool.ts) and given back as they are written to the socket. Every buffer held is counted, whole, in a
 * budget shared by all calls, and so is every buffer the walk borrows through this answer for its batches.
 */
import type { ServerResponse } from 'node:http';
import { BufferPool, POOL_BUFFER_BYTES } from '../buffer-pool';
import { drainOrClose } from '../drain';

export interface ByteBudget {
  reserve(bytes: number): void;
  release(bytes: number): void;
}

interface Chunk {
  buf: Buffer;
  bytes: number;
}

export class JsonChunks {
  private readonly chunks: Chunk[] = [];
  /** The buffer being filled: texts are encoded into it as they come, with no joined string in between. */
  private current: Buffer | undefined;
  private used = 0;
  private total = 0;
  /** Bytes reserved in the budget and not yet released: the buffers of this answer's chunks (borrowed ones apart). */
  private held = 0;

  constructor(
    private readonly budget?: ByteBudget,
    private readonly pool = new BufferPool(0),
  ) {}

  /**
   * A pool buffer counted in the budget, for the walk's batches. The borrower gives it back with giveBack once
   * nothing writes it, also after dispose (a batch may still be running when its walk failed).
   */
  borrow(): Buffer {
    this.budget?.reserve(POOL_BUFFER_BYTES);
    return this.pool.take();
  }

  giveBack(buf: Buffer): void {
    this.budget?.release(buf.length);
    this.pool.give(buf);
  }

  push(text: string): void {
    // A UTF-16 code unit is at most 3 UTF-8 bytes, so this much room always holds the text.
    const room = text.length * 3;
    if (this.current === undefined || this.current.length - this.used < room) {
      this.seal();
      this.current = this.hold(Math.max(POOL_BUFFER_BYTES, room));
    }
    this.used += this.current.write(text, this.used);
  }

  /** Total size in bytes; seals the chunk being filled. */
  get byteLength(): number {
    this.seal();
    return this.total;
  }

  /** Reserves `bytes` and takes a buffer of that size: from the pool when it is the pool's size. */
  private hold(bytes: number): Buffer {
    this.budget?.reserve(bytes);
    this.held += bytes;
    return bytes === POOL_BUFFER_BYTES ? this.pool.take() : Buffer.allocUnsafeSlow(bytes);
  }

  /** Releases a buffer's reservation (the buffer itself goes back to the pool, or is the socket's until written). */
  private let(buf: Buffer): void {
    this.budget?.release(buf.length);
    this.held -= buf.length;
  }

  private seal(): void {
    if (this.current === undefined || this.used === 0) return;
    this.chunks.push({ buf: this.current, bytes: this.used });
    this.total += this.used;
    this.current = undefined;
    this.used = 0;
  }

  /** Gives back what is still held: after writing, or when the answer is abandoned. */
  dispose(): void {
    for (const chunk of this.chunks) this.pool.give(chunk.buf);
    this.chunks.length = 0;
    if (this.current !== undefined) this.pool.give(this.current);
    this.current = undefined;
    this.used = 0;
    this.budget?.release(this.held);
    this.held = 0;
  }

  /**
   * Writes every chunk with backpressure; a chunk's reservation is released as the socket takes it, and its buffer
   * returns to the pool when the write completed. A socket that takes nothing for `stallMs` is destroyed. Resolves
   * on the end.
   */
  async writeTo(res: ServerResponse, stallMs = 30_000): Promise<void> {
    this.seal();
    while (this.chunks.length > 0) {
      const { buf, bytes } = this.chunks.shift()!;
      const ok = res.write(buf.subarray(0, bytes), () => this.pool.give(buf));
      this.let(buf);
      if (!ok) {
        if (res.destroyed) return;
        await drainOrClose(res, stallMs);
        if (res.destroyed) return;
      }
    }
    res.end();
  }
}
