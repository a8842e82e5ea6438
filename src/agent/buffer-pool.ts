/**
 * The agent's 64 KiB I/O buffers: ListDir's batches (filesystem/native-walk.ts) and answer chunks
 * (filesystem/json-chunks.ts), and the pieces of a download (files/download.ts), are taken here and given back once
 * nothing reads them (a batch once written as JSON, a chunk once its socket write completed), so they leave no
 * buffers for V8 to collect. Dropped buffers are freed only by a collection, and V8 starts one for outside-the-heap
 * memory only after about 64 MiB more of it: 32 concurrent listings of a large tree held that much garbage on top of
 * their budget (docs/agent.md, "Memory").
 *
 * The pool keeps at most `maxFree` buffers; a pool not taken from for `idleMs` drops them.
 */
export const POOL_BUFFER_BYTES = 64 * 1024;

export class BufferPool {
  private readonly free: Buffer[] = [];
  private lastTake = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly maxFree: number,
    private readonly idleMs = 10_000,
  ) {}

  /** A buffer of POOL_BUFFER_BYTES, its content left from its last use. */
  take(): Buffer {
    this.lastTake = Date.now();
    return this.free.pop() ?? Buffer.allocUnsafeSlow(POOL_BUFFER_BYTES);
  }

  /** Returns a buffer of take()'s that nothing reads or writes any more; any other buffer is left to the collector. */
  give(buf: Buffer): void {
    if (buf.length !== POOL_BUFFER_BYTES || buf.byteOffset !== 0 || this.free.length >= this.maxFree) return;
    this.free.push(buf);
    this.trimWhenIdle();
  }

  get freeCount(): number {
    return this.free.length;
  }

  private trimWhenIdle(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (Date.now() - this.lastTake >= this.idleMs) this.free.length = 0;
      else this.trimWhenIdle();
    }, this.idleMs);
    this.timer.unref();
  }
}
