/**
 * Writes a Connect error answer unless a response already started. When the request body has not been read to
 * its end, the answer is sent first and the rest of the body is then read and dropped for a short while (at most
 * DRAIN_BYTES, with no pause longer than DRAIN_STALL_MS and DRAIN_MAX_MS in all), so a client still sending gets
 * the answer instead of a reset; only past those limits is the connection cut. The pause limit, not a short total,
 * is what keeps a slow but steady sender (a loaded host) from being reset. At most MAX_DRAINS connections drain at
 * once: every byte drained is a buffer the garbage collector must free, so many clients sending large bodies together
 * would otherwise hold tens of MiB of the agent's memory; past that number the connection stops being read (what the
 * client still sends waits in the kernel's buffers), the agent's side is closed after the answer, and the connection
 * is cut DRAIN_STALL_MS later.
 *
 * Closing a socket that still has unread bytes makes the kernel send a reset, and a client still writing its body
 * then loses the answer it has not read yet. So an answer with an unread body never lets Node close the connection
 * on its own (Node does that right after the answer when the request asked for `Connection: close`): the answer says
 * `Connection: keep-alive`, and the agent ends the connection itself once the body is drained, if the client asked.
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
  if (unread) headers.connection = 'keep-alive';
  res.writeHead(err.httpStatus, headers);
  res.end(body);
  if (unread) drainBriefly(req);
}

/** Reads and drops what is left of the request body, then lets the connection go; cuts it past the limits. */
export function drainBriefly(req: http.IncomingMessage): void {
  const socket = req.socket;
  const cut = () => socket.destroy();
  if (draining >= MAX_DRAINS) {
    req.pause();
    socket.end();
    setTimeout(cut, DRAIN_STALL_MS).unref();
    return;
  }
  draining++;
  let dropped = 0;
  let finished = false;
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
  req.on('end', () => {
    finish();
    if (asksToClose(req)) socket.end();
  });
  req.resume();
}

function asksToClose(req: http.IncomingMessage): boolean {
  const connection = req.headers.connection;
  if (connection !== undefined) return /(^|,)\s*close\s*(,|$)/i.test(connection);
  return req.httpVersion === '1.0';
}
