/**
 * Writing to a socket's handle directly, without the Writable stream between: one native write call per message,
 * no stream state, no write request object per write (one is reused while writes complete at once, which on a
 * socket with room is every write). Order is kept by libuv, which queues a write behind any still pending.
 *
 * Backpressure and errors stay as the stream would have them: write() returns false once bytes wait in the
 * kernel-side queue past the stream's usual 16 KiB mark, and onDrain() calls back when they have all gone out; a
 * failed write destroys the socket with its error, or, for a connection to a sandbox (`tolerateClosed`), the errors
 * that mean the peer closed (EPIPE, ECONNRESET) only stop the writing, as upstream-socket.ts does for the stream.
 *
 * Where the handle cannot be used (another Node without these internals, a TLS socket, bytes still in the stream's
 * own buffer), it writes through the stream instead, with the same effect.
 */
import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';

interface WriteReq {
  handle: unknown;
  oncomplete: (this: WriteReq, status: number) => void;
  /** Kept while a write is pending: the bytes must stay alive until the kernel took them. */
  buffer: Buffer | string | null;
  writer: SocketWriter | null;
}

interface StreamHandle {
  writeBuffer(req: WriteReq, data: Buffer): number;
  writeLatin1String(req: WriteReq, data: string): number;
  writeQueueSize: number;
}

interface StreamWrapBinding {
  WriteWrap: new () => WriteReq;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}

const binding: StreamWrapBinding | undefined = (() => {
  try {
    const b = (process as unknown as { binding(name: string): Partial<StreamWrapBinding> }).binding('stream_wrap');
    return typeof b.WriteWrap === 'function' && b.streamBaseState !== undefined && typeof b.kLastWriteWasAsync === 'number'
      ? (b as StreamWrapBinding)
      : undefined;
  } catch {
    return undefined;
  }
})();

/** Bytes waiting in the kernel-side queue past which write() says "wait" (net.Socket's default high-water mark). */
const HIGH_WATER = 16 * 1024;

const PEER_CLOSED = new Set(['EPIPE', 'ECONNRESET']);

function errnoError(status: number): Error & { code?: string; errno?: number } {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`write ${code}`), { code, errno: status, syscall: 'write' });
}

function onComplete(this: WriteReq, status: number): void {
  const writer = this.writer;
  this.buffer = null;
  this.writer = null;
  writer?.completed(status);
}

export class SocketWriter {
  /** A write request that nothing holds (its write completed at once): reused for the next write. */
  private spare: WriteReq | undefined;
  /** Writes the kernel has not taken yet. */
  private pending = 0;
  private drainWaiters: (() => void)[] = [];
  /** The peer closed while a body was being written (tolerateClosed): later writes are dropped. */
  private stopped = false;

  constructor(
    private readonly socket: Socket,
    private readonly tolerateClosed = false,
  ) {}

  /** Writes data (a string as latin1); false: wait for onDrain before writing more. */
  write(data: Buffer | string): boolean {
    if (this.stopped) return true;
    const socket = this.socket;
    const handle = (socket as Socket & { _handle?: StreamHandle | null })._handle;
    if (
      binding === undefined ||
      handle == null ||
      socket.writableLength > 0 ||
      socket.destroyed ||
      !socket.writable ||
      (socket as Socket & { encrypted?: boolean }).encrypted === true ||
      socket.connecting
    ) {
      return typeof data === 'string' ? socket.write(data, 'latin1') : socket.write(data);
    }
    let req = this.spare;
    if (req === undefined) {
      req = new binding.WriteWrap();
      req.handle = handle;
      req.oncomplete = onComplete;
      req.buffer = null;
      req.writer = null;
    } else {
      this.spare = undefined;
      req.handle = handle;
    }
    const err = typeof data === 'string' ? handle.writeLatin1String(req, data) : handle.writeBuffer(req, data);
    if (err !== 0) {
      this.spare = req;
      this.failed(err);
      return false;
    }
    if (binding.streamBaseState[binding.kLastWriteWasAsync] === 0) {
      this.spare = req;
      return true;
    }
    // The kernel took part of it: the rest goes out later, and this request is the native side's until then.
    req.buffer = data;
    req.writer = this;
    this.pending++;
    return handle.writeQueueSize < HIGH_WATER;
  }

  /** Calls fn once every write so far has gone out (at once when none waits). */
  onDrain(fn: () => void): void {
    if (this.pending > 0) {
      this.drainWaiters.push(fn);
      return;
    }
    if (this.socket.writableNeedDrain) {
      this.socket.once('drain', fn);
      return;
    }
    queueMicrotask(fn);
  }

  /** From a pending write's completion. */
  completed(status: number): void {
    this.pending--;
    if (status < 0) {
      this.failed(status);
      return;
    }
    if (this.pending === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const fn of waiters) fn();
    }
  }

  private failed(status: number): void {
    const err = errnoError(status);
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    if (this.tolerateClosed && PEER_CLOSED.has(err.code ?? '')) {
      // Whoever waits to write more goes on; what it writes is dropped.
      this.stopped = true;
      for (const fn of waiters) fn();
      return;
    }
    if (!this.socket.destroyed) this.socket.destroy(err);
  }
}
