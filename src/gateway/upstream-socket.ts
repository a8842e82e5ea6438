import { Socket } from 'node:net';

/** Write errors that mean "the sandbox closed the connection", after which it may still have an answer for us. */
const PEER_CLOSED = new Set(['EPIPE', 'ECONNRESET']);

/**
 * A connection to a sandbox that survives the sandbox closing it while the gateway is still sending a body.
 *
 * A service that refuses a large upload answers at once (429, 413) and closes. Its answer is already in this
 * side's receive queue, but the gateway's next write fails (EPIPE, or ECONNRESET once the peer reset), and a plain
 * socket destroys itself on a failed write, throwing the unread answer away: the client would get a 502 for a
 * request the sandbox did answer. Here such a write error only stops the writing (later writes are dropped) and
 * the socket keeps reading, so the upstream client sees the answer and then the end of the connection.
 */
export class UpstreamSocket extends Socket {
  private peerClosed = false;

  override _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.peerClosed) {
      callback();
      return;
    }
    super._write(chunk, encoding, (err?: Error | null) => callback(this.tolerated(err)));
  }

  override _writev(chunks: { chunk: unknown; encoding: BufferEncoding }[], callback: (error?: Error | null) => void): void {
    if (this.peerClosed) {
      callback();
      return;
    }
    super._writev?.(chunks, (err?: Error | null) => callback(this.tolerated(err)));
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.peerClosed) {
      callback();
      return;
    }
    super._final((err?: Error | null) => callback(this.tolerated(err)));
  }

  private tolerated(err: Error | null | undefined): Error | null | undefined {
    if (err && PEER_CLOSED.has((err as NodeJS.ErrnoException).code ?? '')) {
      this.peerClosed = true;
      return null;
    }
    return err;
  }
}
