import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { sendError, upstreamTimedOut, upstreamUnreachable } from './error-response';
import { endToEndHeaders } from './hop-by-hop';
import type { UpstreamPools } from './upstream-pool';

export interface ForwardTarget {
  sandboxID: string;
  host: string;
  port: number;
}

export interface ForwardSettings {
  pools: UpstreamPools;
  via: string;
  /** Longest wait for the upstream's response head (the client's Connect-Timeout-Ms may shorten it). */
  upstreamTimeoutMs: number;
  /** Longest wait for a new TCP connection to the upstream. */
  connectTimeoutMs: number;
}

/** Error codes that mean "nothing is listening there" rather than "it broke". */
const REFUSED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EADDRNOTAVAIL']);

/**
 * Streams one request to the sandbox and its response back, without buffering either body.
 * Before the response head is sent, failures become JSON errors (502 refused, 504 timeout); after it,
 * the client connection is cut so the client sees an incomplete response instead of a silently short one.
 * `callTimeoutMs` (Connect-Timeout-Ms) bounds the whole call, body included.
 */
export function forward(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, settings: ForwardSettings, callTimeoutMs: number | undefined): void {
  const headers = endToEndHeaders(req.headers, settings.via);
  const remote = req.socket.remoteAddress;
  if (remote !== undefined) {
    const prior = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = prior === undefined ? remote : `${String(prior)}, ${remote}`;
  }
  const upstream = httpRequest({
    host: target.host,
    port: target.port,
    method: req.method,
    path: req.url,
    headers,
    agent: settings.pools.poolFor(target.host, target.port),
  });

  const waitMs = callTimeoutMs === undefined ? settings.upstreamTimeoutMs : Math.min(callTimeoutMs, settings.upstreamTimeoutMs);
  let finished = false;
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    upstream.destroy();
  }, waitMs);
  const done = () => {
    finished = true;
    clearTimeout(deadline);
  };

  upstream.on('socket', (socket) => {
    if (!socket.connecting) return;
    const connectTimer = setTimeout(() => {
      timedOut = true;
      upstream.destroy();
    }, settings.connectTimeoutMs);
    socket.once('connect', () => clearTimeout(connectTimer));
    socket.once('close', () => clearTimeout(connectTimer));
  });

  upstream.on('error', (err: NodeJS.ErrnoException) => {
    done();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (timedOut) {
      sendError(res, upstreamTimedOut(target.sandboxID, target.port, waitMs));
      return;
    }
    const reason = err.code !== undefined && REFUSED.has(err.code) ? 'connection refused' : `connection failed: ${err.code ?? err.message}`;
    sendError(res, upstreamUnreachable(target.sandboxID, target.port, reason));
  });

  upstream.on('response', (upstreamRes: IncomingMessage) => {
    // Without Connect-Timeout-Ms the deadline covers only the wait for the head; the body may take its time.
    if (callTimeoutMs === undefined) clearTimeout(deadline);
    res.writeHead(upstreamRes.statusCode ?? 502, endToEndHeaders(upstreamRes.headers, settings.via));
    // pipe() rather than stream.pipeline(): pipeline allocates an AbortController (and a DOMException on
    // completion) per call, a measurable cost on this hot path. Breakage is handled by the listeners below.
    upstreamRes.pipe(res);
    upstreamRes.on('end', done);
    // The upstream died mid-body: cut the client connection so it sees an incomplete response.
    upstreamRes.on('error', () => {
      done();
      res.destroy();
    });
    upstreamRes.on('aborted', () => res.destroy());
  });

  // The client went away before the call finished: stop the upstream work too.
  res.on('close', () => {
    if (!finished && !res.writableFinished) {
      done();
      upstream.destroy();
    }
  });
  req.on('error', () => upstream.destroy());
  req.pipe(upstream);
}
