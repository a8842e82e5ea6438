/**
 * Writes a Connect error answer unless a response already started. When the request body has not been read to
 * its end, the answer is sent first and the rest of the body is then read and dropped for a short while (at most
 * DRAIN_BYTES, with no pause longer than DRAIN_STALL_MS and DRAIN_MAX_MS in all), so a client still sending gets
 * the answer instead of a reset; only past those limits is the connection cut. The pause limit, not a short total,
 * is what keeps a slow but steady sender (a loaded host) from being reset. At most MAX_DRAINS connections drain at once: every byte drained is a buffer the garbage
 * collector must free, so many clients sending large bodies together would otherwise hold tens of MiB of the
 * agent's memory; past that number the connection is cut once the answer is written.
 */
import type * as http from 'node:http';
import { type AgentError, errorBody } from './errors';

const DRAIN_STALL_MS = 5_000;
const DRAIN_MAX_MS = 30_000;
const DRAIN_BYTES = 16 * 1024 * 1024;
const MAX_DRAINS = 4;
let draining = 0;

export function sendError(req: http.IncomingMessage, res: http.ServerResponse, err: AgentError): void {
  if (res.headersSent || res.destroyed) return;
  const body = errorBody(err);
  const unread = !req.complete;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...err.headers,
  };
  // No `Connection: close` here: Node would then destroy the socket right after the answer, and the client's
  // unsent body would meet a reset. The connection stays usable once the body is drained.
  res.writeHead(err.httpStatus, headers);
  res.end(body);
  if (unread) drainBriefly(req);
}

/** Reads and drops what is left of the request body, then lets the connection close; cuts it past the limits. */
export function drainBriefly(req: http.IncomingMessage): void {
  const socket = req.socket;
  if (draining >= MAX_DRAINS) {
    socket.end();
    socket.destroySoon();
    return;
  }
  draining++;
  let dropped = 0;
  let finished = false;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, DRAIN_STALL_MS);
  timer.unref();
  const deadline = setTimeout(cut, DRAIN_MAX_MS);
  deadline.unref();
  const finish = () => {
    if (finished) return;
    finished = true;
    draining--;
    clearTimeout(timer);
    clearTimeout(deadline);
  };
  socket.once('close', finish);
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_BYTES) cut();
    else timer.refresh();
  });
  req.on('end', finish);
  req.resume();
}
