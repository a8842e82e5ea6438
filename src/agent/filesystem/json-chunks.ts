/**
 * A response body built as UTF-8 chunks while it is produced: the only copy of a large ListDir response is this
 * list of ~64 KiB buffers (no array of entry objects, no one big string), and the chunks are released as they
 * are written to the socket. Every byte held is counted in a budget shared by all calls.
 */
import type { ServerResponse } from 'node:http';

const CHUNK_BYTES = 64 * 1024;

export interface ByteBudget {
  reserve(bytes: number): void;
  release(bytes: number): void;
}

export class JsonChunks {
  private readonly chunks: Buffer[] = [];
  /** The chunk being filled: texts are encoded into it as they come, with no joined string in between. */
  private current: Buffer | undefined;
  private used = 0;
  private total = 0;
  /** Bytes reserved in the budget and not yet released. */
  private held = 0;

  constructor(private readonly budget?: ByteBudget) {}

  push(text: string): void {
    // A UTF-16 code unit is at most 3 UTF-8 bytes, so this much room always holds the text.
    const room = text.length * 3;
    if (this.current === undefined || this.current.length - this.used < room) {
      this.seal();
      this.current = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, room));
    }
    this.used += this.current.write(text, this.used);
  }

  /** Total size in bytes; seals the chunk being filled. */
  get byteLength(): number {
    this.seal();
    return this.total;
  }

  private seal(): void {
    if (this.current === undefined || this.used === 0) return;
    const chunk = this.current.subarray(0, this.used);
    this.current = undefined;
    this.used = 0;
    this.budget?.reserve(chunk.length);
    this.held += chunk.length;
    this.chunks.push(chunk);
    this.total += chunk.length;
  }

  /** Returns what is still held to the budget (after writing, or when the answer is abandoned). */
  dispose(): void {
    this.chunks.length = 0;
    this.current = undefined;
    this.used = 0;
    this.budget?.release(this.held);
    this.held = 0;
  }

  /**
   * Writes every chunk with backpressure, dropping each once the socket has taken it; a socket that takes nothing
   * for `stallMs` is destroyed. Resolves on the end.
   */
  async writeTo(res: ServerResponse, stallMs = 30_000): Promise<void> {
    this.seal();
    while (this.chunks.length > 0) {
      const chunk = this.chunks.shift()!;
      const ok = res.write(chunk);
      this.budget?.release(chunk.length);
      this.held -= chunk.length;
      if (!ok) {
        if (res.destroyed) return;
        await drainOrClose(res, stallMs);
        if (res.destroyed) return;
      }
    }
    res.end();
  }
}

function drainOrClose(res: ServerResponse, stallMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      res.destroy();
      done();
    }, stallMs);
    const done = () => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
