/**
 * The requests of a plain HTTP/1 connection as its client sends them: where each one starts and the host it names,
 * so the egress relay can judge every request of a kept-alive connection, not only the first (a server hosting many
 * names at one address would otherwise serve a later request for a name the sandbox may not reach). Pure.
 *
 * It follows the framing the way a strict server does (RFC 9112) and gives up where a server could read the bytes
 * another way than it does: a bare CR or LF, a folded or malformed header line, more than one Content-Length, a
 * Transfer-Encoding other than `chunked` alone, both of them, a request line that is not HTTP/1. Giving up closes the
 * connection; nothing is passed on past the point it cannot follow.
 */

/** The longest request head (and chunk-size or trailer line run) followed; a longer one ends the connection. */
export const MAX_HEAD_BYTES = 16 * 1024;
const MAX_CHUNK_LINE = 1024;

export interface RequestHead {
  method: string;
  /** The host the request is for (no port; as written): the target's authority or the one Host. Null: none, or two that differ. */
  host: string | null;
  /** Its body: none, a length, or chunked. */
  body: { kind: 'none' } | { kind: 'length'; bytes: number } | { kind: 'chunked' };
  /** After it the connection may carry another protocol (CONNECT, an Upgrade header). */
  mayUpgrade: boolean;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.[01]$/;
const HEADER_LINE = /^([^:]*):[ \t]*(.*?)[ \t]*$/;
const HOST = /^([A-Za-z0-9.-]+)(?::\d{1,5})?$/;

function hostName(authority: string): string | null {
  const m = HOST.exec(authority);
  return m ? m[1]! : null;
}

/** Whether `text` holds a control character other than a tab (none belongs in a header field). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/** The authority of an absolute-form (`http://host/...`) or authority-form (CONNECT `host:443`) target, or undefined. */
function targetAuthority(method: string, target: string): string | undefined | 'bad' {
  if (target.startsWith('/') || target === '*') return undefined;
  if (method === 'CONNECT') return target;
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(target);
  return m ? m[1]! : 'bad';
}

/**
 * A request head (its text up to and without the blank line, latin1) as a strict server reads it; a string says why
 * it cannot be followed.
 */
export function parseRequestHead(text: string): RequestHead | string {
  const lineText = text.replace(/\r\n/g, '');
  if (/[\r\n]/.test(lineText)) return 'a bare CR or LF in the request head';
  if (hasControl(lineText)) return 'a control character in the request head';
  const [requestLine = '', ...lines] = text.split('\r\n');
  const request = REQUEST_LINE.exec(requestLine);
  if (!request) return 'not an HTTP/1 request line';
  const method = request[1]!;
  const fields = new Map<string, string[]>();
  for (const line of lines) {
    const m = HEADER_LINE.exec(line);
    if (!m || !TOKEN.test(m[1]!)) return `a malformed header line ${JSON.stringify(line.slice(0, 40))}`;
    const name = m[1]!.toLowerCase();
    fields.set(name, [...(fields.get(name) ?? []), m[2]!]);
  }
  const hosts = fields.get('host') ?? [];
  const authority = targetAuthority(method, request[2]!);
  if (authority === 'bad') return 'a request target that is neither a path nor a URL';
  let host: string | null = hosts.length === 1 ? hostName(hosts[0]!) : null;
  if (authority !== undefined) {
    // A server takes the target's authority over the Host header: both must name the same host.
    const named = authority.includes('@') ? null : hostName(authority);
    host = named !== null && (hosts.length === 0 || (host !== null && host.toLowerCase() === named.toLowerCase())) ? named : null;
  }
  const lengths = fields.get('content-length') ?? [];
  const encodings = fields.get('transfer-encoding') ?? [];
  let body: RequestHead['body'] = { kind: 'none' };
  if (encodings.length > 0) {
    if (encodings.length > 1 || !/^chunked$/i.test(encodings[0]!)) return 'a Transfer-Encoding other than chunked alone';
    if (lengths.length > 0) return 'both Content-Length and Transfer-Encoding';
    body = { kind: 'chunked' };
  } else if (lengths.length > 0) {
    if (lengths.length > 1 || !/^\d{1,15}$/.test(lengths[0]!)) return 'more than one or a malformed Content-Length';
    const bytes = Number(lengths[0]);
    if (bytes > 0) body = { kind: 'length', bytes };
  }
  return { method, host, body, mayUpgrade: method === 'CONNECT' || fields.has('upgrade') };
}

/** A piece of the stream to pass on, in order; `request` when the piece is the head of a new request. */
export interface Piece {
  bytes: Buffer;
  request?: RequestHead;
}

export interface Split {
  pieces: Piece[];
  /** Set when the stream cannot be followed past the pieces: close the connection. */
  error?: string;
}

type State =
  | { at: 'head' }
  | { at: 'body'; left: number }
  | { at: 'chunk-size' }
  | { at: 'chunk-data'; left: number }
  | { at: 'chunk-end' }
  | { at: 'trailer' }
  /** After a request that may switch protocols: the next bytes say whether it did. */
  | { at: 'maybe-switched' }
  | { at: 'opaque' }
  | { at: 'failed' };

/**
 * Cuts a client's byte stream into request heads and the bytes between them. Feed it every chunk in order; it keeps
 * an unfinished head (or chunk line) until the rest comes, and passes body bytes on as they come.
 */
export class RequestSplitter {
  private state: State = { at: 'head' };
  private pending: Buffer = Buffer.alloc(0);
  private upgradeNext = false;

  push(chunk: Buffer): Split {
    const pieces: Piece[] = [];
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    const fail = (error: string): Split => {
      this.state = { at: 'failed' };
      return { pieces, error };
    };
    while (data.length > 0) {
      const s = this.state;
      if (s.at === 'failed') return fail('the stream was already given up');
      if (s.at === 'opaque') {
        pieces.push({ bytes: data });
        break;
      }
      if (s.at === 'maybe-switched') {
        // Requests start with a method (letters); a switched protocol's bytes (a WebSocket frame, a TLS record) do not.
        const first = data[0]!;
        this.state = first >= 0x41 && first <= 0x5a ? { at: 'head' } : { at: 'opaque' };
        continue;
      }
      if (s.at === 'head') {
        // Servers skip empty lines before a request line.
        let skip = 0;
        while (data.length >= skip + 2 && data[skip] === 0x0d && data[skip + 1] === 0x0a) skip += 2;
        if (skip > 0) {
          pieces.push({ bytes: data.subarray(0, skip) });
          data = data.subarray(skip);
          continue;
        }
        const end = data.indexOf('\r\n\r\n', 0, 'latin1');
        if (end < 0) {
          if (data.length > MAX_HEAD_BYTES) return fail(`a request head longer than ${MAX_HEAD_BYTES} bytes`);
          this.pending = Buffer.from(data);
          break;
        }
        if (end + 4 > MAX_HEAD_BYTES) return fail(`a request head longer than ${MAX_HEAD_BYTES} bytes`);
        const head = parseRequestHead(data.toString('latin1', 0, end));
        if (typeof head === 'string') return fail(head);
        pieces.push({ bytes: data.subarray(0, end + 4), request: head });
        data = data.subarray(end + 4);
        this.upgradeNext = head.mayUpgrade;
        this.state =
          head.body.kind === 'length'
            ? { at: 'body', left: head.body.bytes }
            : head.body.kind === 'chunked'
              ? { at: 'chunk-size' }
              : this.afterRequest();
        continue;
      }
      if (s.at === 'body' || s.at === 'chunk-data') {
        const n = Math.min(s.left, data.length);
        pieces.push({ bytes: data.subarray(0, n) });
        data = data.subarray(n);
        const left = s.left - n;
        if (left > 0) this.state = { ...s, left };
        else this.state = s.at === 'body' ? this.afterRequest() : { at: 'chunk-end' };
        continue;
      }
      // Lines of the chunked framing: a size line, the CRLF after a chunk's data, trailer lines.
      const eol = data.indexOf('\r\n', 0, 'latin1');
      if (eol < 0) {
        if (data.length > (s.at === 'trailer' ? MAX_HEAD_BYTES : MAX_CHUNK_LINE)) return fail('an over-long line in a chunked body');
        this.pending = Buffer.from(data);
        break;
      }
      const line = data.toString('latin1', 0, eol);
      if (/[\r\n]/.test(line)) return fail('a bare CR or LF in a chunked body');
      if (s.at === 'chunk-end') {
        if (line !== '') return fail("a chunk's data longer than its size");
        this.state = { at: 'chunk-size' };
      } else if (s.at === 'chunk-size') {
        const m = /^([0-9A-Fa-f]{1,12})(?:[ \t]*;[^\r\n]*)?$/.exec(line);
        if (!m) return fail('a malformed chunk size');
        const size = Number.parseInt(m[1]!, 16);
        this.state = size === 0 ? { at: 'trailer' } : { at: 'chunk-data', left: size };
      } else if (line === '') {
        this.state = this.afterRequest();
      } else if (!HEADER_LINE.exec(line) || !TOKEN.test(line.slice(0, line.indexOf(':')))) {
        return fail('a malformed trailer line');
      }
      pieces.push({ bytes: data.subarray(0, eol + 2) });
      data = data.subarray(eol + 2);
    }
    return { pieces };
  }

  private afterRequest(): State {
    return this.upgradeNext ? { at: 'maybe-switched' } : { at: 'head' };
  }
}
