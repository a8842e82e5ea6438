import { timerDelay } from '../contract/connect-timeout';
import type { ClientExchange, RequestHead } from './client-connection';
import { upstreamTimedOut, upstreamUnreachable, type GatewayErrorBody } from './error-response';
import { forwardedRequestHeaders, forwardedResponseHeaders } from './hop-by-hop';
import type { UpstreamFields } from './kept-fields';
import {
  fieldLines,
  UPSTREAM_CONNECT_TIMEOUT,
  UPSTREAM_HEADERS_TIMEOUT,
  type UpstreamBody,
  type UpstreamRequest,
  type UpstreamHandler,
  type UpstreamTls,
} from './upstream-client';
import type { UpstreamPools } from './upstream-pool';

export interface ForwardTarget {
  sandboxID: string;
  host: string;
  port: number;
  /** Request headers this port may not see (lower case): see port-access.ts. */
  dropped: ReadonlySet<string>;
  /** HTTPS: the platform API behind a TLS listener ('verified'), or a sandbox's HTTPS port ('unverified'). */
  tls?: UpstreamTls;
  /** The Host header the upstream gets instead of the client's (a sandbox's `network.maskRequestHost`). */
  requestHost?: string;
}

export interface ForwardSettings {
  pools: UpstreamPools;
  via: string;
  /** Longest wait for the upstream's response head (the pools apply it; named in the 504). */
  upstreamTimeoutMs: number;
  /** Longest wait for a new TCP connection to the upstream (the pools apply it; named in the 504). */
  connectTimeoutMs: number;
  /** Told how long each sandbox took to send its response head, from the call's start (the Prometheus histogram). */
  onUpstreamHead?(seconds: number): void;
}

/**
 * Bodies announced by a Content-Length up to this size are collected before the call is sent (they usually arrived
 * with the head): the sandbox then gets head and body in one write. Larger and chunked bodies stream.
 */
const SMALL_BODY_BYTES = 64 * 1024;

/** Error codes that mean "nothing is listening there" rather than "it broke". */
const REFUSED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EADDRNOTAVAIL']);

/**
 * Streams one request to the sandbox and its answer back, without buffering either body.
 *
 * Framing: the body is forwarded with exactly the framing the parser established (Content-Length or chunked,
 * whatever the method), or the request is refused with 400; see framing.ts.
 *
 * Errors: until the response head has arrived, failures become JSON errors (502 refused or broken, 504 timed out).
 * Once the head has arrived it is the answer: a sandbox that answers early (a 429 while the body is still being
 * sent) and closes is passed through, not turned into a 502. A failure after the head cuts the client connection,
 * so the client sees an incomplete response instead of a silently short one.
 *
 * `callTimeoutMs` (Connect-Timeout-Ms) bounds the whole call, body included; a deadline longer than any timer can
 * hold simply never fires.
 */
export function forward(ex: ClientExchange, target: ForwardTarget, settings: ForwardSettings, callTimeoutMs: number | undefined): void {
  const framing = ex.framing;
  if (framing.kind === 'refused') {
    // The body's extent is unknown: this connection cannot carry another request.
    ex.fail({ message: framing.message, code: 400 }, true);
    return;
  }
  const { head } = ex;
  const fields = upstreamFields(head, target, settings.via);
  const handler = new ForwardHandler(ex, target, settings, callTimeoutMs);
  const client = settings.pools.poolFor(target.host, target.port, target.tls);
  const call: UpstreamRequest = { path: head.url, method: head.method, headers: fields.list, fieldLines: fields.lines, body: NO_BODY };
  if (framing.kind === 'none') {
    client.dispatch(call, handler);
    return;
  }
  if (framing.kind === 'length' && framing.length <= SMALL_BODY_BYTES) {
    // Sent as soon as the announced length is in (the parser delivers no more than that).
    let first: Buffer | undefined;
    let parts: Buffer[] | undefined;
    ex.read({
      data(chunk) {
        if (first === undefined) first = chunk;
        else if (parts === undefined) parts = [first, chunk];
        else parts.push(chunk);
      },
      end() {
        // The call may be over already (the client left, or Connect-Timeout-Ms passed while the body came in).
        if (handler.over || first === undefined) return;
        call.body = { kind: 'buffer', data: parts === undefined ? first : Buffer.concat(parts) };
        client.dispatch(call, handler);
      },
    });
    return;
  }
  // The client's request streams on as it arrives. When the call ends before the body did (the sandbox answered
  // early, or failed), the rest is read and dropped, so the client connection stays in step for its next request.
  handler.onOver = () => {
    if (!ex.bodyDone) ex.drop();
  };
  call.body = { kind: 'stream', source: ex, ...(framing.kind === 'length' ? { length: framing.length } : {}) };
  client.dispatch(call, handler);
}

const NO_BODY: UpstreamBody = { kind: 'none' };

/**
 * The request fields to send upstream (hop-by-hop.ts), in a list and as field lines. A head read with kept fields
 * (kept-fields.ts) takes them from its entry when they were derived there for the same target; Content-Length, the
 * one field such heads differ in, is never among them.
 */
function upstreamFields(head: RequestHead, target: ForwardTarget, via: string): { list: readonly string[]; lines?: Buffer } {
  const kept = head.kept;
  const known = kept?.upstream;
  if (
    known !== undefined &&
    known.via === via &&
    known.remote === head.remoteAddress &&
    known.dropped === target.dropped &&
    known.host === target.requestHost
  )
    return known;
  const list = forwardedRequestHeaders(head.rawHeaders, head.headers, via, head.remoteAddress, target.dropped, target.requestHost);
  if (kept === undefined) return { list };
  const upstream: UpstreamFields = {
    via,
    remote: head.remoteAddress,
    dropped: target.dropped,
    host: target.requestHost,
    list,
    lines: Buffer.from(fieldLines(list), 'latin1'),
  };
  if (known === undefined) kept.upstream = upstream;
  return upstream;
}

/** One forwarded call, as the upstream client's handler: a class rather than closures, one allocation per call. */
class ForwardHandler implements UpstreamHandler {
  private abort: ((err?: Error) => void) | undefined;
  private resume: (() => void) | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private timedOut = false;
  private finished = false;
  /** Called once when the call is over, whichever way. */
  onOver: (() => void) | undefined;
  private readonly startedAt = performance.now();

  constructor(
    private readonly ex: ClientExchange,
    private readonly target: ForwardTarget,
    private readonly settings: ForwardSettings,
    private readonly callTimeoutMs: number | undefined,
  ) {
    const delay = callTimeoutMs === undefined ? undefined : timerDelay(callTimeoutMs);
    if (delay !== undefined) this.deadline = setTimeout(() => this.expire(), delay);
    // The client went away before the call finished: stop the upstream work too.
    ex.onAbort = () => {
      if (!this.finished) this.stop(new Error('the client closed the connection'));
    };
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.finished || this.ex.destroyed) abort(new Error('the call is over'));
  }

  onHeaders(statusCode: number, rawHeaders: string[], resume: () => void): void {
    if (this.finished) return;
    this.resume = resume;
    this.settings.onUpstreamHead?.((performance.now() - this.startedAt) / 1000);
    const fields = forwardedResponseHeaders(rawHeaders, this.settings.via);
    this.ex.sendHead(statusCode, fields.fields, fields.hasLength);
  }

  onHeadLines(statusCode: number, bytes: Buffer, lines: readonly number[], count: number, resume: () => void): void {
    if (this.finished) return;
    this.resume = resume;
    this.settings.onUpstreamHead?.((performance.now() - this.startedAt) / 1000);
    this.ex.sendHeadLines(statusCode, bytes, lines, count, this.settings.via);
  }

  onData(chunk: Buffer): boolean {
    if (this.finished) return false;
    const more = this.ex.sendData(chunk);
    if (!more) this.ex.onDrain(this.resume as () => void);
    return more;
  }

  onComplete(last: Buffer | undefined): void {
    if (this.finished) return;
    this.finish();
    this.ex.end(last);
  }

  onError(err: Error & { code?: string }): void {
    if (this.finished) return;
    this.finish();
    const { ex, target, settings } = this;
    if (ex.headSent) {
      // The upstream died mid-body: cut the client connection so it sees an incomplete response.
      ex.cut();
      return;
    }
    let body: GatewayErrorBody;
    if (this.timedOut) body = upstreamTimedOut(target.sandboxID, target.port, this.callTimeoutMs as number);
    else if (err.code === UPSTREAM_HEADERS_TIMEOUT) body = upstreamTimedOut(target.sandboxID, target.port, settings.upstreamTimeoutMs);
    else if (err.code === UPSTREAM_CONNECT_TIMEOUT) body = upstreamTimedOut(target.sandboxID, target.port, settings.connectTimeoutMs);
    else {
      const cause = (err as { cause?: { code?: string } }).cause;
      const code = err.code ?? cause?.code;
      const reason = code !== undefined && REFUSED.has(code) ? 'connection refused' : `connection failed: ${code ?? err.message}`;
      body = upstreamUnreachable(target.sandboxID, target.port, reason);
    }
    ex.fail(body);
  }

  private expire(): void {
    this.timedOut = true;
    this.deadline = undefined;
    if (this.ex.headSent) {
      // Connect-Timeout-Ms covers the body too: the call is over, the client sees it cut.
      this.finish();
      this.abort?.(new Error('Connect-Timeout-Ms elapsed'));
      this.ex.cut();
      return;
    }
    if (this.abort) this.abort(new Error('Connect-Timeout-Ms elapsed'));
    else this.onError(new Error('Connect-Timeout-Ms elapsed'));
  }

  private stop(err: Error): void {
    this.finish();
    this.abort?.(err);
  }

  get over(): boolean {
    return this.finished;
  }

  private finish(): void {
    this.finished = true;
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.onOver?.();
  }
}
