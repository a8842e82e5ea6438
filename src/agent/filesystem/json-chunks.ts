/**
 * A response body built as UTF-8 chunks while it is produced: the only copy of a large ListDir response is this
 * list of ~64 KiB buffers (no array of entry objects, no one big string), and the chunks are released as they
 * are written to the socket. Every byte held is counted in a budget shared by all calls.
 */
import type { ServerResponse } from 'node:http';

const CHUNK_CHARS = 64 * 1024;

export interface ByteBudget {
  reserve(bytes: number): void;
  release(bytes: number): void;
}

export class JsonChunks {
  private readonly chunks: Buffer[] = [];
  private pending: string[] = [];
  private pendingChars = 0;
  private total = 0;
  /** Bytes reserved in the budget and not yet released. */
  private held = 0;

  constructor(private readonly budget?: ByteBudget) {}

  push(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= CHUNK_CHARS) this.seal();
  }

  /** Total size in bytes; seals the pending text. */
  get byteLength(): number {
    this.seal();
    return this.total;
  }

  private seal(): void {
    if (this.pending.length === 0) return;
    const chunk = Buffer.from(this.pending.join(''), 'utf8');
    this.pending = [];
    this.pendingChars = 0;
    this.budget?.reserve(chunk.length);
    this.held += chunk.length;
    this.chunks.push(chunk);
    this.total += chunk.length;
  }

  /** Returns what is still held to the budget (after writing, or when the answer is abandoned). */
  dispose(): void {
    this.chunks.length = 0;
    this.pending = [];
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
