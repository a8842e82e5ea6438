/**
 * One reader of a process's events (the Start stream, or a Connect stream attached later). Events wait here until
 * the stream's writer takes them; the writer takes the next one only when the socket has room, so a client that
 * reads slowly fills this queue, and a full queue pauses the process's pipes (see ManagedProcess) instead of
 * growing. `next` also wakes up for keepalives and when the call is aborted.
 */
export type ProcessOutput =
  | { kind: 'data'; stream: 'stdout' | 'stderr' | 'pty'; bytes: Buffer }
  | { kind: 'end'; exitCode: number; exited: boolean; status: string; error?: string };

export class Subscriber {
  private readonly items: ProcessOutput[] = [];
  private bytes = 0;
  private wake: (() => void) | undefined;
  closed = false;

  constructor(
    /** Queued bytes above which the subscriber asks the process to pause its pipes. */
    readonly highWater: number,
    private readonly onDrained: () => void,
  ) {}

  get full(): boolean {
    return this.bytes >= this.highWater;
  }

  push(item: ProcessOutput): void {
    if (this.closed) return;
    this.items.push(item);
    if (item.kind === 'data') this.bytes += item.bytes.length;
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.items.length = 0;
    this.bytes = 0;
    this.notify();
  }

  notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** The next event; `undefined` after `waitMs` without one (time for a keepalive) or once the stream is closed. */
  async next(waitMs: number | undefined, signal: AbortSignal): Promise<ProcessOutput | undefined> {
    if (this.items.length === 0 && !this.closed && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = waitMs === undefined ? undefined : setTimeout(done, waitMs);
        signal.addEventListener('abort', done, { once: true });
        this.wake = done;
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
      });
    }
    const item = this.items.shift();
    if (item?.kind === 'data') {
      const wasFull = this.full;
      this.bytes -= item.bytes.length;
      if (wasFull && !this.full) this.onDrained();
    }
    return item;
  }
}
