/**
 * A response body built as UTF-8 chunks while it is produced: the only copy of a large ListDir response is this
 * list of ~64 KiB buffers (no array of entry objects, no one big string), and the chunks are released as they
 * are written to the socket.
 */
import type { ServerResponse } from 'node:http';

const CHUNK_CHARS = 64 * 1024;

export class JsonChunks {
  private readonly chunks: Buffer[] = [];
  private pending: string[] = [];
  private pendingChars = 0;
  private total = 0;

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
    this.chunks.push(chunk);
    this.total += chunk.length;
    this.pending = [];
    this.pendingChars = 0;
  }

  /** Writes every chunk with backpressure, dropping each once the socket has taken it. Resolves on the end. */
  async writeTo(res: ServerResponse): Promise<void> {
    this.seal();
    while (this.chunks.length > 0) {
      const chunk = this.chunks.shift()!;
      if (!res.write(chunk)) {
        if (res.destroyed) return;
        await drainOrClose(res);
        if (res.destroyed) return;
      }
    }
    res.end();
  }
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
