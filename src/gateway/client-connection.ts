/**
 * One client connection of the gateway, on the raw socket: requests parsed by Node's llhttp (http-parser.ts, strict),
 * answered one at a time in order, each answer written by the gateway itself (the head and what body is at hand in
 * one write). Pipelined requests wait their turn with the socket paused. A request head that asks for an upgrade (or
 * CONNECT) hands the socket over, with whatever bytes followed the head, once the answers before it are done.
 *
 * What a request is and how it is answered is ClientExchange's; what to do with it is the server's (hooks).
 */
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { rawErrorFor, rawErrorResponse, type GatewayErrorBody } from './error-response';
import { requestFraming, type RequestFraming } from './framing';
import { RequestHeadScan, scanRequestHead } from './head-scanner';
import { HTTPParser, METHODS, SKIP_BODY_AND_UPGRADE } from './http-parser';
import { KeptFields } from './kept-fields';
import { readInto } from './socket-reader';
import { SocketWriter } from './socket-writer';
import type { BodySink, BodySource } from './upstream-client';

/** A request head as the client sent it. */
export interface RequestHead {
  method: string;
  /** The request target as sent. */
  url: string;
  /** [name, value, ...] in the client's order and spelling. */
  rawHeaders: readonly string[];
  /** Lower-case names; repeated fields combined as Node's HTTP server combines them. */
  headers: Readonly<IncomingHttpHeaders>;
  remoteAddress: string | undefined;
  /** The client asked for (or, HTTP/1.1, did not refuse) a kept-alive connection. */
  keepAlive: boolean;
  /** HTTP/1.1 or later: the answer may be chunked. */
  http11: boolean;
  /** The fast path's entry for this head's fields (kept-fields.ts), where forward.ts keeps what it derives from them. */
  kept?: KeptFields;
}

export interface ConnectionHooks {
  /** A request whose turn it is: answer it through the exchange. */
  request(ex: ClientExchange): void;
  /** An upgrade (or CONNECT) request whose turn it is: the socket is the hook's from now on; `rest` followed the head. */
  upgrade(head: RequestHead, socket: Socket, rest: Buffer): void;
  /** Every answer the gateway finished writing, by status. */
  answered?(status: number): void;
}

export interface ConnectionLimits {
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Past this many bytes of a request body held for a consumer that has not started reading, the socket pauses. */
const HELD_BODY_BYTES = 64 * 1024;

const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;
const CONTINUE_LINE = 'HTTP/1.1 100 Continue\r\n\r\n';
const LAST_CHUNK = '0\r\n\r\n';
const CRLF = '\r\n';
/** Below this size an answer's head and body are copied into one buffer (one write); above it they go as a vector. */
const COPY_BELOW = 16 * 1024;

/** Fields of which Node's server keeps only the first when repeated (its matchKnownFields). */
const FIRST_ONLY = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** The lower-case field map of a head, with Node's rules for repeated fields (first only, `; ` for cookies, else `, `). */
export function headerMap(rawHeaders: readonly string[]): IncomingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    const value = rawHeaders[i + 1];
    const prior = out[name];
    if (prior === undefined) {
      out[name] = name === 'set-cookie' ? [value] : value;
    } else if (name === 'set-cookie') {
      (prior as string[]).push(value);
    } else if (!FIRST_ONLY.has(name)) {
      out[name] = `${prior as string}${name === 'cookie' ? '; ' : ', '}${value}`;
    }
  }
  return out as IncomingHttpHeaders;
}

/** Status lines made so far, by status code: one string per code rather than one per answer. */
const STATUS_LINES: string[] = [];

function statusLine(status: number): string {
  let line = STATUS_LINES[status];
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}${CRLF}`;
    if (Number.isInteger(status) && status >= 100 && status <= 999) STATUS_LINES[status] = line;
  }
  return line;
}

/** Status lines of the fast path as bytes, by status code (statusLine's text). */
const STATUS_BYTES: Buffer[] = [];

function statusBytes(status: number): Buffer {
  let bytes = STATUS_BYTES[status];
  if (bytes === undefined) {
    bytes = Buffer.from(statusLine(status), 'latin1');
    STATUS_BYTES[status] = bytes;
  }
  return bytes;
}

/** The end of an answer head of the fast path, as bytes: Via, and `connection: close` on a connection's last answer. */
let endsFor = '';
let endKeep = Buffer.alloc(0);
let endClose = Buffer.alloc(0);

function headEnd(via: string, close: boolean): Buffer {
  if (via !== endsFor) {
    endsFor = via;
    endKeep = Buffer.from(`via: ${via}${CRLF}${CRLF}`, 'latin1');
    endClose = Buffer.from(`via: ${via}${CRLF}connection: close${CRLF}${CRLF}`, 'latin1');
  }
  return close ? endClose : endKeep;
}

/** Whether an answer with this status to this method carries a body at all. */
const bodiless = (method: string, status: number) => method === 'HEAD' || status === 204 || status === 304 || status < 200;

/**
 * One request on a client connection and its answer. The body arrives through read() (held until then); the answer
 * goes out through head() then data()/end(), or fail() for the gateway's own errors.
 */
export class ClientExchange implements BodySource {
  readonly framing: RequestFraming;
  /** Body chunks that came before read() was called. */
  private held: Buffer[] | undefined;
  private heldBytes = 0;
  private sink: BodySink | undefined;
  /** The whole request body has arrived. */
  bodyDone = false;
  /** The consumer wants no more of the body: the rest is read and dropped. */
  private dropping = false;
  /** The answer's head, kept until the first body bytes so both go out in one write. */
  private pendingHead: string | Buffer | undefined;
  private chunked = false;
  headSent = false;
  /** The whole answer was written. */
  answered = false;
  private status = 0;
  /** The connection closes after this answer. */
  closeAfter: boolean;
  /** Called once if the client connection goes away before the answer is written. */
  onAbort: (() => void) | undefined;

  constructor(
    readonly head: RequestHead,
    private readonly conn: ClientConnection,
  ) {
    this.framing = requestFraming(head.headers);
    this.closeAfter = !head.keepAlive;
    if (this.framing.kind === 'none') this.bodyDone = true;
  }

  /** Starts delivering the body to sink (what already arrived first). A request without a body ends at once. */
  read(sink: BodySink): void {
    this.sink = sink;
    const held = this.held;
    if (held !== undefined) {
      this.held = undefined;
      this.heldBytes = 0;
      for (const chunk of held) sink.data(chunk);
      this.conn.bodyWanted();
    }
    if (this.bodyDone) sink.end();
  }

  /** Stops reading into the sink until resume() (the upstream is full). */
  pause(): void {
    this.conn.pauseReading(this);
  }

  resume(): void {
    this.conn.resumeReading(this);
  }

  /** No more of the body is wanted: the rest is read and dropped, so the connection stays in step. */
  drop(): void {
    this.sink = undefined;
    this.held = undefined;
    this.dropping = true;
    this.conn.resumeReading(this);
    this.conn.bodyWanted();
  }

  /** From the parser. false: the socket should pause (a held body grew past its bound). */
  pushBody(chunk: Buffer): boolean {
    if (this.dropping) return true;
    if (this.sink !== undefined) {
      this.sink.data(chunk);
      return true;
    }
    if (this.held === undefined) this.held = [chunk];
    else this.held.push(chunk);
    this.heldBytes += chunk.length;
    return this.heldBytes < HELD_BODY_BYTES;
  }

  endBody(): void {
    this.bodyDone = true;
    if (this.sink !== undefined && !this.dropping) this.sink.end();
    this.conn.exchangeProgress(this);
  }

  /**
   * The answer's status and fields ([name, value, ...], end-to-end only, plus the upstream's Content-Length if it
   * sent one). The framing to the client is chosen here: the Content-Length given, none for a bodiless answer,
   * else chunked (HTTP/1.1) or the end of the connection (HTTP/1.0).
   */
  sendHead(status: number, fields: readonly string[], hasLength: boolean): void {
    this.status = status;
    this.headSent = true;
    let head = statusLine(status);
    for (let i = 0; i < fields.length; i += 2) head += `${fields[i]}: ${fields[i + 1]}${CRLF}`;
    if (!hasLength && !bodiless(this.head.method, status)) {
      if (this.head.http11) {
        this.chunked = true;
        head += `transfer-encoding: chunked${CRLF}`;
      } else {
        this.closeAfter = true;
      }
    }
    if (this.closeAfter || this.conn.closing) {
      this.closeAfter = true;
      head += `connection: close${CRLF}`;
    }
    this.pendingHead = head + CRLF;
  }

  /**
   * The answer's head as the sandbox's own field lines (see UpstreamHandler.onHeadLines: end-to-end only, its
   * Content-Length among them), with the gateway's status line and `via` (and `connection: close` when this is the
   * connection's last answer) put around them: the same head sendHead makes of the same fields, without a string per field.
   */
  sendHeadLines(status: number, bytes: Buffer, lines: readonly number[], count: number, via: string): void {
    this.status = status;
    this.headSent = true;
    if (this.conn.closing) this.closeAfter = true;
    const start = statusBytes(status);
    const end = headEnd(via, this.closeAfter);
    let size = start.length + end.length;
    for (let k = 0; k < count; k += 2) size += lines[k + 1] - lines[k];
    const head = Buffer.allocUnsafe(size);
    let at = start.copy(head, 0);
    for (let k = 0; k < count; k += 2) at += bytes.copy(head, at, lines[k], lines[k + 1]);
    end.copy(head, at);
    this.pendingHead = head;
  }

  /** Body bytes of the answer (valid during this call only: copied if kept); false: the client is full, wait for onDrain. */
  sendData(chunk: Buffer): boolean {
    if (this.answered || chunk.length === 0) return true;
    return this.conn.write(this.takeHead(), this.chunked ? chunkFrame(chunk) : chunk, this.chunked ? CRLF : undefined);
  }

  /** Ends the answer, with its last body bytes if they came with its end. */
  end(last?: Buffer): void {
    if (this.answered) return;
    const head = this.takeHead();
    if (this.chunked) {
      if (last !== undefined && last.length > 0) this.conn.write(head, chunkFrame(last), `${CRLF}${LAST_CHUNK}`);
      else this.conn.write(head, undefined, LAST_CHUNK);
    } else {
      this.conn.write(head, last, undefined);
    }
    this.finishAnswer();
  }

  /** The gateway's own error answer; once an answer has started, the connection is cut instead. */
  fail(body: GatewayErrorBody, close = false): void {
    if (this.answered) return;
    if (this.headSent) {
      this.cut();
      return;
    }
    if (close) this.closeAfter = true;
    const text = JSON.stringify(body);
    this.sendHead(body.code, ['content-type', 'application/json', 'content-length', String(Buffer.byteLength(text))], true);
    this.end(Buffer.from(text));
  }

  /** Cuts the client connection: the client sees an answer end short. */
  cut(): void {
    this.answered = true;
    this.conn.destroy();
  }

  /** Calls fn once when the client's side is writable again. */
  onDrain(fn: () => void): void {
    this.conn.onDrain(fn);
  }

  /** The client connection is gone. */
  get destroyed(): boolean {
    return this.conn.destroyed;
  }

  private takeHead(): string | Buffer | undefined {
    const head = this.pendingHead;
    this.pendingHead = undefined;
    return head;
  }

  private finishAnswer(): void {
    this.answered = true;
    this.onAbort = undefined;
    this.conn.hooks.answered?.(this.status);
    this.conn.exchangeProgress(this);
  }

  /** The connection went away under this exchange. */
  abort(): void {
    if (this.answered) return;
    const fn = this.onAbort;
    this.onAbort = undefined;
    this.answered = true;
    fn?.();
  }
}

const chunkFrame = (chunk: Buffer): [string, Buffer] => [`${chunk.length.toString(16)}${CRLF}`, chunk];

/** An upgrade request waiting for the answers before it, with the bytes that followed its head. */
interface PendingUpgrade {
  head: RequestHead;
  rest: Buffer;
}

export class ClientConnection {
  private readonly parser = new HTTPParser();
  private partialHeaders: string[] = [];
  private partialUrl = '';
  /** The exchange being answered now, and those parsed behind it (pipelining). */
  private current: ClientExchange | undefined;
  private readonly waiting: ClientExchange[] = [];
  /** The exchange whose body the parser is reading. */
  private parsing: ClientExchange | undefined;
  private upgrade: PendingUpgrade | undefined;
  /** An error answer to write once the answers before it are done; then the connection closes. */
  private failure: string | undefined;
  private readonly remoteAddress: string | undefined;
  /** The exchange whose body consumer paused reading. */
  private pausedBy: ClientExchange | undefined;
  private heldPause = false;
  destroyed = false;
  /** The gateway is stopping: no further requests on this connection. */
  closing = false;
  /** When the message being parsed began (coarse clock), 0 between messages. */
  private messageStartedAt = 0;
  private headParsed = false;
  idleSince: number;
  lastActivity: number;
  private readonly onData = (data: Buffer) => this.receive(data);
  private readonly reader: { detach(): void };
  private readonly writer: SocketWriter;
  private readonly onClose = () => this.gone();
  private detached = false;
  private parserClosed = false;
  /**
   * Bytes still to come of a request body announced by Content-Length. Such a body is taken from the reads as it is,
   * not through the parser (which copies every piece into a buffer of its own): the parser stops after the head and
   * is started afresh for the next request.
   */
  private lengthLeft = 0;
  private readonly parserResource = {};
  /**
   * The parser has been given no byte since it was last started: the next request may be read by the fast path
   * (head-scanner.ts). Once llhttp has read a request to its end by itself, it may hold the start of the next one, so
   * the connection stays with llhttp.
   */
  private parserFresh = true;
  private readonly scanned = new RequestHeadScan();
  /** The fields of the last head the fast path read on this connection. */
  private kept: KeptFields | undefined;
  private readonly onMessageComplete = () => {
    const ex = this.parsing;
    this.parsing = undefined;
    this.messageStartedAt = 0;
    ex?.endBody();
  };

  constructor(
    readonly socket: Socket,
    readonly hooks: ConnectionHooks,
    private readonly limits: ConnectionLimits,
    private readonly clock: () => number,
    private readonly forget: (conn: ClientConnection) => void,
  ) {
    this.remoteAddress = socket.remoteAddress;
    this.idleSince = this.lastActivity = clock();
    const p = this.parser;
    p.initialize(HTTPParser.REQUEST, this.parserResource, limits.maxHeaderBytes, HTTPParser.kLenientNone);
    p[HTTPParser.kOnMessageBegin] = () => {
      this.messageStartedAt = this.clock();
      this.headParsed = false;
    };
    p[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      for (const h of headers) this.partialHeaders.push(h);
      this.partialUrl += url;
    };
    p[HTTPParser.kOnHeadersComplete] = (
      major: number,
      minor: number,
      headers: string[] | undefined,
      method: number,
      url: string | undefined,
      _status: number,
      _statusMessage: string,
      upgrade: boolean,
      keepAlive: boolean,
    ) => this.onHead(major, minor, headers, method, url, upgrade, keepAlive);
    p[HTTPParser.kOnBody] = (chunk: Buffer) => {
      const ex = this.parsing;
      if (ex !== undefined && !ex.pushBody(chunk)) this.holdPause(true);
    };
    p[HTTPParser.kOnMessageComplete] = this.onMessageComplete;
    socket.setNoDelay(true);
    this.reader = readInto(socket, this.onData);
    this.writer = new SocketWriter(socket);
    socket.on('error', () => {});
    socket.on('close', this.onClose);
  }

  private onHead(
    major: number,
    minor: number,
    headers: string[] | undefined,
    methodIndex: number,
    url: string | undefined,
    upgrade: boolean,
    keepAlive: boolean,
  ): number {
    const rawHeaders = headers ?? this.partialHeaders;
    this.partialHeaders = [];
    const target = url ?? this.partialUrl;
    this.partialUrl = '';
    this.headParsed = true;
    const head: RequestHead = {
      method: METHODS[methodIndex],
      url: target,
      rawHeaders,
      headers: headerMap(rawHeaders),
      remoteAddress: this.remoteAddress,
      keepAlive,
      http11: major > 1 || (major === 1 && minor >= 1),
    };
    if (upgrade) {
      // The rest of the connection is the upgrade's: its bytes are taken once execute() returns.
      this.upgrade = { head, rest: Buffer.alloc(0) };
      return SKIP_BODY_AND_UPGRADE;
    }
    const ex = new ClientExchange(head, this);
    if (!ex.bodyDone) this.parsing = ex;
    if (ex.framing.kind === 'length') {
      // The parser stops after this head and tells nothing more of this message (a call saved): receive() reads
      // the body and ends the message.
      this.lengthLeft = ex.framing.length;
      this.parser[HTTPParser.kOnMessageComplete] = undefined;
    }
    this.take(ex);
    return this.lengthLeft > 0 ? SKIP_BODY_AND_UPGRADE : 0;
  }

  /**
   * A request head the fast path read (see head-scanner.ts), at the start of `data`: one that repeats the kept fields
   * (`repeat`, see kept-fields.ts) or one scanned in full. Returns where it ends.
   */
  private scannedHead(data: Buffer, repeat: boolean): number {
    const scan = this.scanned;
    this.messageStartedAt = this.clock();
    this.headParsed = true;
    let kept = this.kept;
    let url: string;
    let rawHeaders: readonly string[];
    let headers: IncomingHttpHeaders;
    if (repeat && kept !== undefined) {
      // The fields of the last head again (kept-fields.ts): only the target and the Content-Length digits are read.
      const l = scan.fields.lengthAt;
      const digits = l === -1 ? '' : data.toString('latin1', scan.fields.at[l + 2], scan.fields.at[l + 3]);
      url = data.toString('latin1', scan.targetStart, scan.targetEnd);
      rawHeaders = kept.rawHeadersWith(digits);
      headers = kept.headersWith(digits);
    } else {
      // One string of the head; the target and fields are parts of it.
      const text = data.toString('latin1', 0, scan.end);
      const list = scan.rawHeaders(text);
      const map = headerMap(list);
      url = scan.target(text);
      kept = this.kept = KeptFields.of(data, scan, list, map);
      rawHeaders = kept.rawHeaders;
      headers = kept.headers;
    }
    const ex = new ClientExchange(
      {
        method: scan.method,
        url,
        rawHeaders,
        headers,
        remoteAddress: this.remoteAddress,
        keepAlive: scan.keepAlive,
        http11: true,
        kept,
      },
      this,
    );
    if (ex.bodyDone) this.messageStartedAt = 0;
    else this.parsing = ex;
    if (ex.framing.kind === 'length') this.lengthLeft = ex.framing.length;
    this.take(ex);
    return scan.end;
  }

  /** A new request: answered now, or after the ones before it. */
  private take(ex: ClientExchange): void {
    if (this.current === undefined) this.start(ex);
    else this.waiting.push(ex);
  }

  private receive(data: Buffer): void {
    this.lastActivity = this.clock();
    let from = 0;
    while (from < data.length) {
      if (this.upgrade !== undefined || this.failure !== undefined || this.destroyed) return;
      if (this.lengthLeft > 0) from = this.lengthBody(data, from);
      else from = this.parse(from === 0 ? data : data.subarray(from), from);
    }
    // Requests queued behind the current one: read no further until their turn.
    if (this.waiting.length > 0 && this.upgrade === undefined && this.failure === undefined) this.socket.pause();
  }

  /**
   * Body bytes of a request framed by Content-Length, from `at`; returns where the next message starts. A copy is
   * passed on: the read buffer is reused, and the body may be held until its consumer reads.
   */
  private lengthBody(data: Buffer, at: number): number {
    const take = Math.min(data.length - at, this.lengthLeft);
    this.lengthLeft -= take;
    const ex = this.parsing;
    if (ex !== undefined && take > 0 && !ex.pushBody(Buffer.from(data.subarray(at, at + take)))) this.holdPause(true);
    if (this.lengthLeft === 0) {
      this.parsing = undefined;
      this.messageStartedAt = 0;
      ex?.endBody();
    }
    return at + take;
  }

  /** Parses from `data` (which starts at `offset` of the read); returns where parsing stopped in the read. */
  private parse(data: Buffer, offset: number): number {
    if (this.parserFresh) {
      if (this.kept?.readRepeat(data, this.limits.maxHeaderBytes, this.scanned)) return offset + this.scannedHead(data, true);
      if (scanRequestHead(data, 0, this.limits.maxHeaderBytes, this.scanned)) return offset + this.scannedHead(data, false);
    }
    this.parserFresh = false;
    const result = this.parser.execute(data);
    if (typeof result !== 'number') {
      this.parseFailed(result.code);
      return offset + data.length;
    }
    // Set by onHead during execute().
    const upgrade = this.upgrade as PendingUpgrade | undefined;
    if (upgrade !== undefined) {
      // A copy: the read buffer is reused.
      upgrade.rest = Buffer.from(data.subarray(result));
      this.socket.pause();
      this.next();
      return offset + data.length;
    }
    if (this.lengthLeft > 0) {
      // The head announced a length and the parser stopped after it: a fresh parser for the next request (one that
      // stopped there would let errors pass unreported), and the body from the bytes that follow.
      if (!this.parserClosed)
        this.parser.initialize(HTTPParser.REQUEST, this.parserResource, this.limits.maxHeaderBytes, HTTPParser.kLenientNone);
      this.parser[HTTPParser.kOnMessageComplete] = this.onMessageComplete;
      this.parserFresh = true;
      return offset + result;
    }
    return offset + data.length;
  }

  private parseFailed(code: string | undefined): void {
    this.failure =
      code === 'HPE_HEADER_OVERFLOW'
        ? rawErrorResponse(431, 'Request Header Fields Too Large', 'request head too large')
        : rawErrorResponse(400, 'Bad Request', 'malformed HTTP request');
    this.socket.pause();
    const ex = this.parsing;
    this.parsing = undefined;
    // A body cut by bad framing: whatever consumes it sees the call end; the answer, if any, still goes out.
    if (ex !== undefined && ex !== this.current) this.waiting.splice(this.waiting.indexOf(ex), 1);
    if (ex !== undefined && ex === this.current && !ex.answered) {
      // Its call is cancelled; the client gets the error unless an answer has already begun.
      const started = ex.headSent;
      ex.abort();
      this.current = undefined;
      if (started) this.destroy();
      else this.next();
      return;
    }
    this.next();
  }

  private start(ex: ClientExchange): void {
    this.current = ex;
    const expect = ex.head.headers.expect;
    if (expect !== undefined) {
      if (ex.head.http11 && CONTINUE.test(expect)) {
        if (!ex.bodyDone) this.socket.write(CONTINUE_LINE, 'latin1');
      } else if (ex.head.http11) {
        ex.fail({ message: `Expect ${JSON.stringify(expect)} is not supported`, code: 417 }, true);
        return;
      }
    }
    this.hooks.request(ex);
  }

  /** An exchange's answer or body advanced: when both are done, the next request takes its turn. */
  exchangeProgress(ex: ClientExchange): void {
    if (ex !== this.current || !ex.answered) return;
    if (!ex.bodyDone) {
      // Answered before its body was in (an early answer): read the rest and drop it, unless the connection closes.
      if (ex.closeAfter) this.end();
      else ex.drop();
      return;
    }
    this.current = undefined;
    if (this.pausedBy === ex) this.pausedBy = undefined;
    if (ex.closeAfter) {
      this.end();
      return;
    }
    this.next();
  }

  /** The next thing on this connection: a queued request, an upgrade, a deferred error, or reading on. */
  private next(): void {
    if (this.current !== undefined || this.destroyed) return;
    const ex = this.waiting.shift();
    if (ex !== undefined) {
      this.start(ex);
      this.maybeResume();
      return;
    }
    if (this.upgrade !== undefined) {
      const { head, rest } = this.upgrade;
      this.detach();
      if (head.method === 'CONNECT') {
        // CONNECT would name an address of the caller's choosing: refused, never routed.
        this.socket.end(rawErrorFor({ message: 'CONNECT is not supported by the gateway', code: 501 }));
        this.socket.destroySoon();
        return;
      }
      this.hooks.upgrade(head, this.socket, rest);
      return;
    }
    if (this.failure !== undefined) {
      this.socket.end(this.failure);
      this.socket.destroySoon();
      return;
    }
    if (this.closing) {
      this.end();
      return;
    }
    this.idleSince = this.clock();
    this.maybeResume();
  }

  /** Reads on unless something holds the socket: queued requests, a full consumer, an upgrade or error pending. */
  private maybeResume(): void {
    if (
      this.waiting.length === 0 &&
      this.pausedBy === undefined &&
      !this.heldPause &&
      this.upgrade === undefined &&
      this.failure === undefined &&
      !this.destroyed
    )
      this.socket.resume();
  }

  /** The socket leaves this connection (an upgrade): the parser and the timers let go of it. */
  private detach(): void {
    this.reader.detach();
    this.socket.off('close', this.onClose);
    this.detached = true;
    this.forget(this);
    this.closeParser();
  }

  private closeParser(): void {
    if (this.parserClosed) return;
    this.parserClosed = true;
    // Never inside the parser's own callback (this may be one): closed once the current call stack is done.
    setImmediate(() => this.parser.close());
  }

  write(head: string | Buffer | undefined, body: Buffer | [string, Buffer] | undefined, tail: string | undefined): boolean {
    if (this.destroyed) return false;
    this.lastActivity = this.clock();
    const socket = this.socket;
    const frame = Array.isArray(body) ? body[0] : undefined;
    const data = Array.isArray(body) ? body[1] : body;
    const size = (head?.length ?? 0) + (frame?.length ?? 0) + (data?.length ?? 0) + (tail?.length ?? 0);
    if (data === undefined || data.length < COPY_BELOW) {
      // One buffer, one write.
      const out = Buffer.allocUnsafe(size);
      let at = 0;
      if (typeof head === 'string') at += out.write(head, at, 'latin1');
      else if (head !== undefined) at += head.copy(out, at);
      if (frame !== undefined) at += out.write(frame, at, 'latin1');
      if (data !== undefined) at += data.copy(out, at);
      if (tail !== undefined) out.write(tail, at, 'latin1');
      return this.writer.write(out);
    }
    socket.cork();
    if (typeof head === 'string') socket.write(head, 'latin1');
    else if (head !== undefined) socket.write(head);
    if (frame !== undefined) socket.write(frame, 'latin1');
    // A copy: the stream keeps the chunk until it is written, and an answer's body may be a view of a read buffer.
    let more = socket.write(Buffer.from(data));
    if (tail !== undefined) more = socket.write(tail, 'latin1');
    socket.uncork();
    return more;
  }

  onDrain(fn: () => void): void {
    this.writer.onDrain(fn);
  }

  pauseReading(ex: ClientExchange): void {
    if (ex !== this.current || this.destroyed) return;
    this.pausedBy = ex;
    this.socket.pause();
  }

  resumeReading(ex: ClientExchange): void {
    if (this.pausedBy !== ex) return;
    this.pausedBy = undefined;
    this.maybeResume();
  }

  /** A body held for a consumer that has not started reading grew past its bound: pause until it reads. */
  private holdPause(on: boolean): void {
    this.heldPause = on;
    if (on) this.socket.pause();
  }

  bodyWanted(): void {
    if (!this.heldPause) return;
    this.heldPause = false;
    this.maybeResume();
  }

  /** Timeouts, checked on the server's tick. */
  tick(now: number): void {
    if (this.destroyed) return;
    if (this.messageStartedAt > 0 && this.current === undefined && this.failure === undefined) {
      if (!this.headParsed && now - this.messageStartedAt > this.limits.headersTimeoutMs) {
        this.timedOut();
        return;
      }
    }
    if (this.messageStartedAt > 0 && this.headParsed && now - this.messageStartedAt > this.limits.requestTimeoutMs) {
      // The whole request did not arrive in time.
      const ex = this.current;
      if (ex !== undefined && !ex.headSent) ex.fail({ message: 'the request was not received in time', code: 408 }, true);
      else this.destroy();
      return;
    }
    if (now - this.lastActivity > this.limits.idleTimeoutMs) {
      this.destroy();
      return;
    }
    if (
      this.current === undefined &&
      this.messageStartedAt === 0 &&
      this.waiting.length === 0 &&
      now - this.idleSince > this.limits.keepAliveTimeoutMs
    ) {
      this.destroy();
    }
  }

  private timedOut(): void {
    this.failure = rawErrorResponse(408, 'Request Timeout', 'the request was not received in time');
    this.socket.pause();
    this.next();
  }

  /** Nothing in progress: safe to close at once. */
  get idle(): boolean {
    return this.current === undefined && this.messageStartedAt === 0 && this.waiting.length === 0;
  }

  /** Stops after the answers in progress (the gateway is closing). */
  shutdown(): void {
    this.closing = true;
    if (this.idle) this.destroy();
  }

  /** Closes after what was written has gone out. */
  private end(): void {
    if (this.destroyed) return;
    this.socket.destroySoon();
  }

  destroy(): void {
    if (this.detached) return;
    this.socket.destroy();
    this.gone();
  }

  private gone(): void {
    if (this.destroyed || this.detached) return;
    this.destroyed = true;
    this.forget(this);
    this.closeParser();
    const current = this.current;
    this.current = undefined;
    current?.abort();
    for (const ex of this.waiting.splice(0)) ex.abort();
  }
}
