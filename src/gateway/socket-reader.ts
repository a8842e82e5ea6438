/**
 * Reading a socket's bytes into one callback, without a buffer allocated per read: Node's `onread` mode (a buffer
 * given by the reader, reused for every read), which `net.connect` takes as an option but an accepted socket cannot
 * be given. Here it is switched on for either by the same internal fields `onread` sets; where they are not found
 * (another Node), the socket's 'data' events are used instead, with the same effect.
 *
 * The bytes passed on are valid only during the callback: the gateway's parser copies what it keeps.
 */
import type { Socket } from 'node:net';

/** The one read buffer of this process: every read is handled before the next can start. */
const SHARED = Buffer.allocUnsafe(64 * 1024);

interface UserBufferHandle {
  useUserBuffer?(buffer: Uint8Array): void;
}

const symbolOf = (socket: Socket, description: string): symbol | undefined =>
  Object.getOwnPropertySymbols(socket).find((s) => s.description === description);

/**
 * Sends every read of `socket` to `onBytes`. `detach()` returns the socket to ordinary 'data' events (a copy of
 * each read), as anything else taking it over (a tunnel's pipe) expects.
 */
export function readInto(socket: Socket, onBytes: (data: Buffer) => void): { detach(): void } {
  const handle = (socket as Socket & { _handle?: UserBufferHandle | null })._handle;
  const kBuffer = symbolOf(socket, 'kBuffer');
  const kBufferCb = symbolOf(socket, 'kBufferCb');
  const tls = (socket as Socket & { encrypted?: boolean }).encrypted === true;
  if (tls || handle?.useUserBuffer === undefined || kBuffer === undefined || kBufferCb === undefined) {
    socket.on('data', onBytes);
    return { detach: () => socket.off('data', onBytes) };
  }
  let target: ((data: Buffer) => void) | undefined = onBytes;
  const fields = socket as unknown as Record<symbol, unknown>;
  fields[kBuffer] = SHARED;
  fields[kBufferCb] = (n: number, buffer: Buffer) => {
    const data = buffer.subarray(0, n);
    if (target !== undefined) target(data);
    else socket.emit('data', Buffer.from(data));
  };
  handle.useUserBuffer(SHARED);
  return {
    detach: () => {
      target = undefined;
    },
  };
}
