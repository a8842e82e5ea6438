/**
 * HTTP/1.1 to one upstream address, made for the gateway's one job rather than a general-purpose client: keep-alive
 * connections with one call at a time on each (no pipelining), at most a set number of connections (further calls
 * queue), each request written as its head in one string and its body after it in the same write, each response
 * parsed by Node's own HTTP parser (llhttp, strict: conflicting or repeated lengths, bad chunking and junk are
 * errors) and handed on as it arrives, with flow control. A connection is reused only after a whole response to a
 * whole request, announced keep-alive; anything the upstream sends outside a call closes the connection.
 *
 * The caller frames the request (forward.ts decides it from what the client's parser established): the headers it
 * gives carry no framing field, and `body` says which framing to write.
 */
import { isIP, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import { ResponseHead, scanResponseHead } from './head-scanner';
import { HTTPParser, SKIP_BODY_AND_UPGRADE, type NativeParser } from './http-parser';
import { readInto } from './socket-reader';
import { SocketWriter } from './socket-writer';
import { UpstreamSocket } from './upstream-socket';

/**
 * HTTPS to an upstream: 'verified', its certificate checked against the host name (the platform API behind a TLS
 * listener); 'unverified', any certificate accepted (a sandbox port listed in `network.httpsPorts`: the sandbox's own
 * server, often self-signed, reached at the address the catalog gives). Undefined: plain HTTP.
 */
export type UpstreamTls = 'verified' | 'unverified' | undefined;

/** The TLS options of a connection to `host:port`. */
export function upstreamTlsOptions(host: string, port: number, tls: 'verified' | 'unverified'): ConnectionOptions {
  return {
    host,
    port,
    servername: isIP(host) === 0 ? host : undefined,
    ALPNProtocols: ['http/1.1'],
    ...(tls === 'unverified' ? { rejectUnauthorized: false } : {}),
  };
}

export type UpstreamBody =
  | { kind: 'none' }
  | { kind: 'buffer'; data: Buffer }
  /** Streamed: `length` bytes exactly (Content-Length), or chunked when undefined. */
  | { kind: 'stream'; source: BodySource; length?: number };

/** Where a streamed body's chunks go, in order, then its end. */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
}

/** A request body that arrives over time (the client's exchange, client-connection.ts). */
export interface BodySource {
  /** Delivers the body's chunks as they come, then its end. */
  read(sink: BodySink): void;
  pause(): void;
  resume(): void;
  /** No more of the body is wanted. */
  drop(): void;
}

export interface UpstreamRequest {
  method: string;
  path: string;
  /** [name, value, ...], end-to-end fields only: never a framing field. */
  headers: readonly string[];
  /** The same fields as the bytes of their field lines (fieldLines), when the caller has them made already. */
  fieldLines?: Buffer;
  body: UpstreamBody;
}

/** Fields as the field lines of a head: `name: value` and CRLF each, as latin1 text. */
export function fieldLines(fields: readonly string[]): string {
  let lines = '';
  for (let i = 0; i < fields.length; i += 2) lines += `${fields[i]}: ${fields[i + 1]}${CRLF}`;
  return lines;
}

/**
 * A request's head (its start line, its field lines, then `end`: the framing field and the blank line) and the
 * body when it has one, in one buffer, for one write.
 */
function requestBytes(start: string, lines: Buffer | string, end: string, body?: Buffer): Buffer {
  const out = Buffer.allocUnsafe(start.length + lines.length + end.length + (body?.length ?? 0));
  let at = out.write(start, 0, 'latin1');
  at += typeof lines === 'string' ? out.write(lines, at, 'latin1') : lines.copy(out, at);
  at += out.write(end, at, 'latin1');
  if (body !== undefined) body.copy(out, at);
  return out;
}

/** What a call tells its owner, in this order: connect (with the way to abort), head, data..., complete; or error. */
export interface UpstreamHandler {
  onConnect(abort: (err?: Error) => void): void;
  /** `headers`: [name, value, ...] as the upstream sent them. `resume` restarts reading after onData returned false. */
  onHeaders(status: number, headers: string[], resume: () => void): void;
  /**
   * The same for a head read by the fast path (head-scanner.ts): its end-to-end field lines, CRLF included and
   * Content-Length among them, are the byte ranges `lines[0..count)` ([start, end, ...]) of `bytes`, valid during
   * this call only.
   */
  onHeadLines(status: number, bytes: Buffer, lines: readonly number[], count: number, resume: () => void): void;
  /**
   * false: stop reading until resume() is called. The bytes may be a view of the reused read buffer: valid during
   * this call only, so a handler that keeps them copies them (so for `last`).
   */
  onData(chunk: Buffer): boolean;
  /** `last`: the end of the body, when it arrived with the end of the response (the caller can end with it). */
  onComplete(last: Buffer | undefined): void;
  onError(err: Error & { code?: string }): void;
}

export interface UpstreamClientSettings {
  maxConnections: number;
  connectTimeoutMs: number;
  /** Longest wait for a response head after the request was handed over. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long (below the usual server keep-alive timeouts). */
  idleTimeoutMs: number;
}

/** Error codes of this client: the gateway's error answers name what ran out. */
export const UPSTREAM_CONNECT_TIMEOUT = 'UPSTREAM_CONNECT_TIMEOUT';
export const UPSTREAM_HEADERS_TIMEOUT = 'UPSTREAM_HEADERS_TIMEOUT';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

/** Methods whose call may be sent again on a new connection when a reused one turned out closed before answering. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

const CRLF = '\r\n';

const closeParser = (parser: NativeParser) => parser.close();

const LENGTH_TEXT = /^[0-9]{1,15}$/;

/**
 * The body length a response head announces, when it frames its body by Content-Length alone. The parser (strict)
 * has already refused a repeated or malformed Content-Length and one beside Transfer-Encoding; a head with any
 * Transfer-Encoding is left to the parser all the same.
 */
function announcedLength(fields: readonly string[]): number | undefined {
  let length: number | undefined;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name.length === 14 && name.toLowerCase() === 'content-length') {
      const value = fields[i + 1];
      if (length !== undefined || !LENGTH_TEXT.test(value)) return undefined;
      length = Number(value);
    } else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') {
      return undefined;
    }
  }
  return length;
}
const LAST_CHUNK = '0\r\n\r\n';

/** The longest response head the fast path reads (llhttp's default limit; longer ones go to llhttp). */
const MAX_HEAD_BYTES = 16 * 1024;

interface Call {
  request: UpstreamRequest;
  handler: UpstreamHandler;
  /** When the request was handed to a connection (for the headers timeout); 0 while it waits for one. */
  sentAt: number;
  /** Sent again once already (a reused connection closed under it). */
  retried: boolean;
  over: boolean;
}

/** One keep-alive connection: its socket, its parser, and the call it carries now (if any). */
class Connection {
  private readonly parser = new HTTPParser();
  call: Call | undefined;
  /** The current call's response head has arrived / the whole response has. */
  private headed = false;
  private completed = false;
  /** The upstream may keep the connection after this response. */
  private keepAlive = false;
  /** The whole request (body included) was written. */
  private requestSent = false;
  /** Bytes of a response to the current call have arrived. */
  private answered = false;
  /** This connection has carried a call before the current one. */
  reused = false;
  idleSince = 0;
  private partialHeaders: string[] = [];
  /** The latest body chunk of this read, held until the parser has said whether the response ends with it. */
  private pendingChunk: Buffer | undefined;
  /**
   * Bytes of a body announced by Content-Length still to come. Such a body is taken from the reads as it is, not
   * through the parser (which copies every piece into a buffer of its own): the parser stops after the head and is
   * started afresh for the next response.
   */
  private lengthLeft = 0;
  private readonly parserResource = {};
  /**
   * The parser has been given no byte since it was last started: the next response may be read by the fast path
   * (head-scanner.ts). Once llhttp has read a response to its end by itself (chunked, say), it may hold the start
   * of bytes that followed, so the connection stays with llhttp.
   */
  private fresh = true;
  private readonly scanned = new ResponseHead();
  private dead = false;
  private bodyCleanup: (() => void) | undefined;
  private readonly writer: SocketWriter;

  constructor(
    readonly socket: Socket,
    private readonly client: UpstreamClient,
  ) {
    // A sandbox that closes while a body is still being sent may have answered: see upstream-socket.ts.
    this.writer = new SocketWriter(socket, true);
    const p = this.parser;
    p.initialize(HTTPParser.RESPONSE, this.parserResource, 0, HTTPParser.kLenientNone);
    p[HTTPParser.kOnHeaders] = (headers: string[]) => {
      for (const h of headers) this.partialHeaders.push(h);
    };
    p[HTTPParser.kOnHeadersComplete] = (
      _major: number,
      _minor: number,
      headers: string[] | undefined,
      _method: unknown,
      _url: unknown,
      status: number,
      _statusMessage: string,
      upgrade: boolean,
      keepAlive: boolean,
    ) => this.onHead(status, headers, upgrade, keepAlive);
    p[HTTPParser.kOnBody] = (chunk: Buffer) => this.onBody(chunk);
    p[HTTPParser.kOnMessageComplete] = this.onMessageComplete;
    readInto(socket, (data: Buffer) => this.onSocketData(data));
    socket.on('end', () => this.onSocketEnd());
    socket.on('error', (err: Error) => this.die(err));
    socket.on('close', () => this.die(coded('the upstream closed the connection', 'UPSTREAM_CLOSED')));
  }

  start(call: Call): void {
    this.call = call;
    this.headed = false;
    this.completed = false;
    this.keepAlive = false;
    this.requestSent = false;
    this.answered = false;
    call.sentAt = performance.now();
    this.write(call.request);
  }

  private write(request: UpstreamRequest): void {
    const { body } = request;
    const start = `${request.method} ${request.path} HTTP/1.1${CRLF}`;
    const lines = request.fieldLines ?? fieldLines(request.headers);
    const writer = this.writer;
    switch (body.kind) {
      case 'none':
        writer.write(requestBytes(start, lines, CRLF));
        this.requestSent = true;
        return;
      case 'buffer':
        writer.write(requestBytes(start, lines, `content-length: ${body.data.length}${CRLF}${CRLF}`, body.data));
        this.requestSent = true;
        return;
      case 'stream':
        writer.write(
          requestBytes(
            start,
            lines,
            body.length === undefined ? `transfer-encoding: chunked${CRLF}${CRLF}` : `content-length: ${body.length}${CRLF}${CRLF}`,
          ),
        );
        this.streamBody(body.source, body.length === undefined);
    }
  }

  private streamBody(source: BodySource, chunked: boolean): void {
    const socket = this.socket;
    const writer = this.writer;
    let done = false;
    const onDrain = () => {
      if (!done) source.resume();
    };
    const cleanup = () => {
      this.bodyCleanup = undefined;
      done = true;
    };
    this.bodyCleanup = cleanup;
    source.read({
      data: (chunk: Buffer) => {
        if (done || chunk.length === 0) return;
        let more: boolean;
        if (chunked) {
          socket.cork();
          socket.write(`${chunk.length.toString(16)}${CRLF}`, 'latin1');
          socket.write(chunk);
          more = socket.write(CRLF, 'latin1');
          socket.uncork();
        } else {
          more = writer.write(chunk);
        }
        if (!more) {
          source.pause();
          writer.onDrain(onDrain);
        }
      },
      end: () => {
        if (done) return;
        cleanup();
        if (chunked) writer.write(LAST_CHUNK);
        this.requestSent = true;
      },
    });
  }

  private onHead(status: number, headers: string[] | undefined, upgrade: boolean, keepAlive: boolean): number {
    const call = this.call;
    const fields = headers ?? this.partialHeaders;
    this.partialHeaders = [];
    if (!call || this.completed) {
      this.die(coded('the upstream sent a response nobody asked for', 'UPSTREAM_UNSOLICITED'));
      return 1;
    }
    this.answered = true;
    if (status === 101 || upgrade) {
      this.die(coded('the upstream switched protocols on a request that asked for no upgrade', 'UPSTREAM_PROTOCOL'));
      return 1;
    }
    // 1xx interim answers (103 Early Hints, a stray 100) are not passed on; the final answer follows.
    if (status < 200) return 0;
    this.headed = true;
    this.keepAlive = keepAlive;
    // Reading resumes for this call only: a late `drain` of an earlier call's client must not resume a later one.
    call.handler.onHeaders(status, fields, () => {
      if (!this.dead && this.call === call) this.socket.resume();
    });
    // A response to HEAD has no body, whatever its head announces.
    if (call.request.method === 'HEAD') return 1;
    if (status !== 204 && status !== 304) {
      const length = announcedLength(fields);
      if (length !== undefined && length > 0) {
        // The parser stops after this head and tells nothing more of this response (a call saved).
        this.lengthLeft = length;
        this.parser[HTTPParser.kOnMessageComplete] = undefined;
        return SKIP_BODY_AND_UPGRADE;
      }
    }
    return 0;
  }

  private onBody(chunk: Buffer): void {
    const call = this.call;
    if (!call || call.over) return;
    this.flushBody();
    this.pendingChunk = chunk;
  }

  private flushBody(): void {
    const chunk = this.pendingChunk;
    if (chunk === undefined) return;
    this.pendingChunk = undefined;
    const call = this.call;
    if (!call || call.over) return;
    if (!call.handler.onData(chunk)) this.socket.pause();
  }

  private readonly onMessageComplete = (): void => {
    if (!this.headed) return; // the end of an interim (1xx) answer
    this.completed = true;
  };

  private onSocketData(data: Buffer): void {
    if (!this.call) {
      // Bytes while idle: the upstream is out of step with us; the connection cannot be trusted.
      this.die(coded('the upstream sent data outside a call', 'UPSTREAM_UNSOLICITED'));
      return;
    }
    if (this.lengthLeft > 0) {
      this.lengthBody(data, 0);
      return;
    }
    if (this.fresh && this.call.request.method !== 'HEAD' && scanResponseHead(data, 0, MAX_HEAD_BYTES, this.scanned)) {
      this.scannedHead(data);
      return;
    }
    this.fresh = false;
    const result = this.parser.execute(data);
    if (typeof result !== 'number') {
      this.die(coded(`the upstream's response is malformed (${result.code ?? result.message})`, 'UPSTREAM_MALFORMED'));
      return;
    }
    if (this.dead) return;
    if (this.lengthLeft > 0) {
      // The head announced a length and the parser stopped after it: a fresh parser for the next response (one
      // that stopped there would let errors pass unreported), and the body from the bytes that follow.
      this.parser.initialize(HTTPParser.RESPONSE, this.parserResource, 0, HTTPParser.kLenientNone);
      this.parser[HTTPParser.kOnMessageComplete] = this.onMessageComplete;
      this.fresh = true;
      this.lengthBody(data, result);
      return;
    }
    if (this.completed) this.finishCall();
    else this.flushBody();
  }

  /** A response head the fast path read (see head-scanner.ts): passed on as its bytes, then its body from the reads. */
  private scannedHead(data: Buffer): void {
    const call = this.call as Call;
    const head = this.scanned;
    this.answered = true;
    this.headed = true;
    this.keepAlive = head.keepAlive;
    call.handler.onHeadLines(head.status, data, head.kept, head.keptCount, () => {
      if (!this.dead && this.call === call) this.socket.resume();
    });
    if (this.dead || this.call !== call) return;
    this.lengthLeft = head.length;
    this.lengthBody(data, head.end);
  }

  /**
   * Body bytes of a response framed by Content-Length, from `at` in this read. They are valid during the handler's
   * call only (the read buffer is reused), as the handler's contract says. Bytes past the body's end are bytes
   * outside a call: the connection is out of step and dies, the call with it.
   */
  private lengthBody(data: Buffer, at: number): void {
    const call = this.call as Call;
    const take = Math.min(data.length - at, this.lengthLeft);
    this.lengthLeft -= take;
    const chunk = data.subarray(at, at + take);
    if (this.lengthLeft > 0) {
      if (take > 0 && !call.over && !call.handler.onData(chunk)) this.socket.pause();
      return;
    }
    if (at + take < data.length) {
      this.die(coded('the upstream sent data outside a call', 'UPSTREAM_UNSOLICITED'));
      return;
    }
    this.completed = true;
    this.pendingChunk = chunk;
    this.finishCall();
  }

  private onSocketEnd(): void {
    if (this.lengthLeft > 0) {
      this.die(coded(`the upstream's response is incomplete (${this.lengthLeft} bytes of its body missing)`, 'UPSTREAM_MALFORMED'));
      return;
    }
    // A response delimited by the end of the connection is complete now.
    if (this.call && this.headed && !this.completed) {
      const result = this.parser.finish();
      if (result instanceof Error) {
        this.die(coded(`the upstream's response is incomplete (${result.code ?? result.message})`, 'UPSTREAM_MALFORMED'));
        return;
      }
      if (this.completed) {
        this.keepAlive = false;
        this.finishCall();
      }
    }
    this.die(coded('the upstream closed the connection', 'UPSTREAM_CLOSED'));
  }

  private finishCall(): void {
    const call = this.call as Call;
    const last = this.pendingChunk;
    this.pendingChunk = undefined;
    this.call = undefined;
    const reusable = this.keepAlive && this.requestSent && !call.over;
    call.over = true;
    this.bodyCleanup?.();
    if (reusable) {
      this.reused = true;
      // The last of the body may have paused reading (the client's side was full), and the `drain` that would
      // resume it never comes once that response has ended: a connection is always handed on reading, or the
      // next call's answer would sit unread in it.
      this.socket.resume();
      this.client.release(this);
    } else {
      this.die(undefined);
    }
    call.handler.onComplete(last);
  }

  /** Ends the current call with err (the owner's abort, or a timeout): the connection goes with it. */
  abort(err: Error): void {
    const call = this.call;
    if (!call || call.over) return;
    this.die(err);
  }

  /** The connection is gone; a call still on it fails (or, never answered on a reused connection, is sent again). */
  die(err: (Error & { code?: string }) | undefined): void {
    if (this.dead) return;
    this.dead = true;
    this.pendingChunk = undefined;
    this.lengthLeft = 0;
    this.bodyCleanup?.();
    this.socket.destroy();
    // Never inside the parser's own callback (this may be one): closed once the current call stack is done.
    setImmediate(closeParser, this.parser);
    this.client.forget(this);
    const call = this.call;
    this.call = undefined;
    if (!call || call.over) return;
    const replayable =
      this.reused && !this.answered && !call.retried && call.request.body.kind !== 'stream' && IDEMPOTENT.has(call.request.method);
    if (replayable && err?.code !== UPSTREAM_HEADERS_TIMEOUT && (err as { aborted?: boolean } | undefined)?.aborted !== true) {
      call.retried = true;
      this.client.requeue(call);
      return;
    }
    call.over = true;
    call.handler.onError(err ?? coded('the upstream closed the connection', 'UPSTREAM_CLOSED'));
  }

  /** Waiting for the head longer than allowed. */
  headersOverdue(now: number, limitMs: number): boolean {
    return this.call !== undefined && !this.headed && now - this.call.sentAt > limitMs;
  }
}

/** The keep-alive connections to one address and the calls waiting for one. */
export class UpstreamClient {
  private readonly idle: Connection[] = [];
  private readonly busy = new Set<Connection>();
  private connecting = 0;
  private readonly queue: Call[] = [];
  private closed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly tls: UpstreamTls,
    private readonly settings: UpstreamClientSettings,
  ) {}

  dispatch(request: UpstreamRequest, handler: UpstreamHandler): void {
    const call: Call = { request, handler, sentAt: 0, retried: false, over: false };
    handler.onConnect((err?: Error) => this.abortCall(call, Object.assign(err ?? new Error('aborted'), { aborted: true })));
    if (!call.over) this.assign(call);
  }

  private assign(call: Call): void {
    if (this.closed) {
      this.fail(call, coded('the gateway is closing', 'UPSTREAM_CLOSED'));
      return;
    }
    const conn = this.idle.pop();
    if (conn) {
      this.busy.add(conn);
      conn.start(call);
      return;
    }
    this.queue.push(call);
    if (this.busy.size + this.connecting < this.settings.maxConnections && this.connecting < this.queue.length) this.open();
  }

  requeue(call: Call): void {
    this.assign(call);
  }

  private abortCall(call: Call, err: Error): void {
    if (call.over) return;
    for (const conn of this.busy) {
      if (conn.call === call) {
        conn.abort(err);
        return;
      }
    }
    const at = this.queue.indexOf(call);
    if (at >= 0) this.queue.splice(at, 1);
    this.fail(call, err);
  }

  private fail(call: Call, err: Error): void {
    if (call.over) return;
    call.over = true;
    call.handler.onError(err);
  }

  private open(): void {
    this.connecting++;
    const { host, port } = this;
    const socket: Socket = this.tls
      ? tlsConnect(upstreamTlsOptions(host, port, this.tls))
      : new UpstreamSocket({ allowHalfOpen: false }).connect({ host, port });
    socket.setNoDelay(true);
    let settled = false;
    const timer = setTimeout(() => {
      settle(coded(`connect timeout after ${this.settings.connectTimeoutMs} ms`, UPSTREAM_CONNECT_TIMEOUT));
      socket.destroy();
    }, this.settings.connectTimeoutMs);
    const onError = (err: Error) => settle(err);
    const settle = (err: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', onError);
      this.connecting--;
      if (err) {
        socket.destroy();
        // The call this connection was opened for fails; others keep waiting for connections still coming.
        const call = this.queue.shift();
        if (call) this.fail(call, err);
        return;
      }
      if (this.closed) {
        socket.destroy();
        return;
      }
      socket.setKeepAlive(true, 60_000);
      const conn = new Connection(socket, this);
      this.release(conn);
    };
    socket.once('error', onError);
    socket.once(this.tls ? 'secureConnect' : 'connect', () => settle(undefined));
  }

  /** A connection free for the next call: the oldest queued call takes it, or it waits idle. */
  release(conn: Connection): void {
    this.busy.delete(conn);
    const next = this.queue.shift();
    if (next) {
      this.busy.add(conn);
      conn.start(next);
      return;
    }
    conn.idleSince = performance.now();
    this.idle.push(conn);
  }

  forget(conn: Connection): void {
    this.busy.delete(conn);
    const at = this.idle.indexOf(conn);
    if (at >= 0) this.idle.splice(at, 1);
    // A queued call may now open a connection of its own.
    if (this.queue.length > this.connecting && this.busy.size + this.connecting < this.settings.maxConnections && !this.closed) this.open();
  }

  /** Timeouts, checked on the owner's tick: heads overdue, idle connections past their time. */
  tick(now: number): void {
    for (const conn of this.busy) {
      if (conn.headersOverdue(now, this.settings.headersTimeoutMs)) {
        conn.abort(coded(`no response head within ${this.settings.headersTimeoutMs} ms`, UPSTREAM_HEADERS_TIMEOUT));
      }
    }
    while (this.idle.length > 0 && now - this.idle[0].idleSince > this.settings.idleTimeoutMs) this.idle[0].die(undefined);
  }

  /** Nothing open, nothing waiting: the owner may drop it. */
  get unused(): boolean {
    return this.idle.length === 0 && this.busy.size === 0 && this.connecting === 0 && this.queue.length === 0;
  }

  close(): void {
    this.closed = true;
    for (const call of this.queue.splice(0)) this.fail(call, coded('the gateway is closing', 'UPSTREAM_CLOSED'));
    for (const conn of [...this.idle, ...this.busy]) conn.die(coded('the gateway is closing', 'UPSTREAM_CLOSED'));
  }
}
