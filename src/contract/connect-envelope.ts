/**
 * The Connect protocol's stream envelope: one flags byte, the message length as a big-endian uint32, the message.
 * Flags 0 is a message, 2 (END_STREAM_FLAG) the end-of-stream message. Both functions use nothing but Buffer, so a
 * program rendered for a host without the kit's modules (src/verify/sandbox-probe.ts) embeds them as they are.
 */
export const END_STREAM_FLAG = 2;

export const ENVELOPE_HEAD_BYTES = 5;

/** A frame of ENVELOPE_HEAD_BYTES + length bytes with its head written; the caller writes the message after it. */
export function allocEnvelope(flags: number, length: number): Buffer {
  const frame = Buffer.allocUnsafe(5 + length);
  frame[0] = flags;
  frame.writeUInt32BE(length, 1);
  return frame;
}

export function encodeEnvelope(flags: number, message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.byteLength);
  frame[0] = flags;
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  return frame;
}

/** The whole envelopes at the start of `buf`, and the bytes after them (an envelope still arriving). */
export function splitEnvelopes(buf: Buffer): { frames: Array<{ flags: number; message: Buffer }>; rest: Buffer } {
  const frames: Array<{ flags: number; message: Buffer }> = [];
  let at = 0;
  while (buf.length - at >= 5) {
    const length = buf.readUInt32BE(at + 1);
    if (buf.length - at - 5 < length) break;
    frames.push({ flags: buf[at] as number, message: buf.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return { frames, rest: buf.subarray(at) };
}
