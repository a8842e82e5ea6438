/**
 * A strict reader of the one head shape that carries almost every call and answer: `HTTP/1.1`, plain fields, a body
 * framed by one `Content-Length` (or, for a request, none). It reads the bytes where they lie: an answer's head goes
 * on to the client as the sandbox wrote it, with only the hop-by-hop lines left out, without a string per field; a
 * request's head is read without llhttp's calls into JavaScript (the gateway's fast paths: upstream-client.ts,
 * client-connection.ts).
 *
 * It never decides what llhttp would refuse: anything it does not fully understand (another version or method, a
 * 1xx, 204 or 304 answer, an answer without a Content-Length, a repeated one, Transfer-Encoding, Upgrade, Expect, a
 * Connection other than `keep-alive` or `close`, Via in an answer, a head not whole in these bytes, and every byte
 * outside the strict grammar: bare LF, a space before a colon, a folded line, trailing whitespace, bytes above 0x7E)
 * makes it decline, and the caller hands the bytes to llhttp, which accepts or refuses them as before. What it
 * accepts, llhttp accepts and reads the same way (a unit test holds the two side by side, for every byte value).
 */
import { HOP_BY_HOP_FIELDS } from './hop-by-hop';

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;

/** Field-name bytes (RFC 9110 tchar). */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TCHAR[c.charCodeAt(0)] = 1;

/** Bytes of a field value or reason phrase taken here: visible ASCII, space and tab (no obs-text, no controls). */
const TEXT = new Uint8Array(256);
for (let c = 0x20; c <= 0x7e; c++) TEXT[c] = 1;
TEXT[HTAB] = 1;

/** At most this many fields: a head with more goes to llhttp. */
const MAX_FIELDS = 64;

/** Whether the `len` bytes at `at` spell `lower` (lower-case ASCII letters and `-`), in any case. */
function nameIs(buf: Uint8Array, at: number, len: number, lower: string): boolean {
  if (len !== lower.length) return false;
  for (let k = 0; k < len; k++) if ((buf[at + k] | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

/** Hop-by-hop names other than the framing ones, grouped by length for the check of each field. */
const DROPPED_BY_LENGTH: string[][] = [];
for (const name of HOP_BY_HOP_FIELDS) {
  if (name === 'content-length' || name === 'transfer-encoding') continue;
  const group = DROPPED_BY_LENGTH[name.length];
  if (group === undefined) DROPPED_BY_LENGTH[name.length] = [name];
  else group.push(name);
}

function isDropped(buf: Uint8Array, at: number, len: number): boolean {
  const names = DROPPED_BY_LENGTH[len];
  if (names === undefined) return false;
  for (const name of names) if (nameIs(buf, at, len, name)) return true;
  return false;
}

/**
 * The fields of a head, as scanFields found them: for each, [nameStart, nameEnd, valueStart, valueEnd, lineEnd] in
 * `at` (values without the whitespace around them, lines with their CRLF); and what they say of the framing.
 */
class Fields {
  readonly at: number[] = [];
  /** Numbers of `at` in use (5 per field). */
  count = 0;
  /** Content-Length, or -1 when none was given. */
  length = -1;
  /** Where in `at` the Content-Length field's numbers start, or -1 when none was given. */
  lengthAt = -1;
  keepAlive = true;
  /** The head has a field of this name (lower case) given to scanFields to look for. */
  flagged = false;
}

/**
 * Reads header fields from `i` up to and including the blank line; returns where the head ends, or -1 to decline:
 * bytes outside the grammar, the head not whole before `stop`, more than MAX_FIELDS fields, Transfer-Encoding,
 * Upgrade, a repeated or malformed Content-Length, a Connection other than one `keep-alive` or `close`. A field named
 * `flag` (lower case) sets `out.flagged`.
 */
function scanFields(buf: Uint8Array, i: number, stop: number, out: Fields, flag: string): number {
  const at = out.at;
  let n = 0;
  let length = -1;
  let lengthAt = -1;
  let keepAlive = true;
  let connection = false;
  let flagged = false;
  for (;;) {
    if (i + 1 >= stop) return -1;
    if (buf[i] === CR) {
      if (buf[i + 1] !== LF) return -1;
      i += 2;
      break;
    }
    if (n >= MAX_FIELDS * 5) return -1;
    const start = i;
    while (i < stop && TCHAR[buf[i]] === 1) i++;
    const nameLen = i - start;
    if (nameLen === 0 || i >= stop || buf[i] !== COLON) return -1;
    const nameEnd = i;
    i++;
    while (i < stop && (buf[i] === SP || buf[i] === HTAB)) i++;
    const valueStart = i;
    while (i < stop && TEXT[buf[i]] === 1) i++;
    if (i + 1 >= stop || buf[i] !== CR || buf[i + 1] !== LF) return -1;
    const valueEnd = i;
    if (valueEnd > valueStart && (buf[valueEnd - 1] === SP || buf[valueEnd - 1] === HTAB)) return -1;
    i += 2;
    if (nameIs(buf, start, nameLen, 'content-length')) {
      const digits = valueEnd - valueStart;
      if (length !== -1 || digits < 1 || digits > 15) return -1;
      let value = 0;
      for (let k = valueStart; k < valueEnd; k++) {
        const d = buf[k] - 0x30;
        if (d < 0 || d > 9) return -1;
        value = value * 10 + d;
      }
      length = value;
      lengthAt = n;
    } else if (nameIs(buf, start, nameLen, 'connection')) {
      if (connection) return -1;
      connection = true;
      if (nameIs(buf, valueStart, valueEnd - valueStart, 'close')) keepAlive = false;
      else if (!nameIs(buf, valueStart, valueEnd - valueStart, 'keep-alive')) return -1;
    } else if (nameIs(buf, start, nameLen, 'transfer-encoding') || nameIs(buf, start, nameLen, 'upgrade')) {
      return -1;
    } else if (nameIs(buf, start, nameLen, flag)) {
      flagged = true;
    }
    at[n++] = start;
    at[n++] = nameEnd;
    at[n++] = valueStart;
    at[n++] = valueEnd;
    at[n++] = i;
  }
  out.count = n;
  out.length = length;
  out.lengthAt = lengthAt;
  out.keepAlive = keepAlive;
  out.flagged = flagged;
  return i;
}

/** What scanResponseHead found; one per connection, overwritten by every scan. */
export class ResponseHead {
  status = 0;
  /** The body's length (Content-Length). */
  length = 0;
  /** The sandbox keeps the connection after this answer. */
  keepAlive = true;
  /** Where the head ends in the scanned bytes (after its blank line). */
  end = 0;
  /** [start, end, ...]: the field lines (CRLF included) that go on to the client, in order, Content-Length among them. */
  readonly kept: number[] = [];
  /** How many numbers of `kept` this head uses. */
  keptCount = 0;
  readonly fields = new Fields();
}

/**
 * Reads a response head from `from` in `buf` into `out`; false when the head is not the simple shape (or not whole
 * within `maxBytes`), and then nothing may be concluded from it: the caller gives the bytes to llhttp.
 */
export function scanResponseHead(buf: Uint8Array, from: number, maxBytes: number, out: ResponseHead): boolean {
  const stop = Math.min(buf.length, from + maxBytes);
  let i = from;
  // "HTTP/1.1 " and three digits, then a space.
  if (stop - i < 17) return false;
  if (
    buf[i] !== 0x48 ||
    buf[i + 1] !== 0x54 ||
    buf[i + 2] !== 0x54 ||
    buf[i + 3] !== 0x50 ||
    buf[i + 4] !== 0x2f ||
    buf[i + 5] !== 0x31 ||
    buf[i + 6] !== 0x2e ||
    buf[i + 7] !== 0x31 ||
    buf[i + 8] !== SP
  )
    return false;
  const d1 = buf[i + 9] - 0x30;
  const d2 = buf[i + 10] - 0x30;
  const d3 = buf[i + 11] - 0x30;
  if (d1 < 2 || d1 > 5 || d2 < 0 || d2 > 9 || d3 < 0 || d3 > 9 || buf[i + 12] !== SP) return false;
  const status = d1 * 100 + d2 * 10 + d3;
  if (status === 204 || status === 304) return false;
  i += 13;
  // The reason phrase: visible ASCII and spaces (it is not forwarded: the gateway writes its own status line).
  while (i < stop && buf[i] >= SP && buf[i] <= 0x7e) i++;
  if (i + 1 >= stop || buf[i] !== CR || buf[i + 1] !== LF) return false;
  const fields = out.fields;
  // A Via of the sandbox's own is merged with the gateway's by the slow path.
  const end = scanFields(buf, i + 2, stop, fields, 'via');
  if (end === -1 || fields.length === -1 || fields.flagged) return false;
  const at = fields.at;
  const ranges = out.kept;
  let kept = 0;
  for (let k = 0; k < fields.count; k += 5) {
    const start = at[k];
    if (isDropped(buf, start, at[k + 1] - start)) continue;
    ranges[kept++] = start;
    ranges[kept++] = at[k + 4];
  }
  out.status = status;
  out.length = fields.length;
  out.keepAlive = fields.keepAlive;
  out.end = end;
  out.keptCount = kept;
  return true;
}

/** Methods the request scanner takes, as the request line spells them. */
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];
const METHOD_BYTES = METHODS.map((m) => Buffer.from(`${m} `, 'latin1'));

/** Request-target bytes taken here (RFC 3986 pchar, `/`, `?`, `%`); the target must start with `/`. */
const TARGET = new Uint8Array(256);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%") TARGET[c.charCodeAt(0)] = 1;

const HTTP11_CRLF = Buffer.from(' HTTP/1.1\r\n', 'latin1');

/** What scanRequestHead found; one per client connection, overwritten by every scan. */
export class RequestHeadScan {
  method = '';
  /** Where the request target lies in the bytes. */
  targetStart = 0;
  targetEnd = 0;
  /** Content-Length, or -1 without one (no body). */
  length = -1;
  /** Where the field lines start (after the request line). */
  fieldsStart = 0;
  /** The client keeps the connection after this request (no `Connection: close`). */
  keepAlive = true;
  /** Where the head ends (after its blank line). */
  end = 0;
  readonly fields = new Fields();

  /**
   * The request target and [name, value, ...] of the head's fields, as llhttp gives them (names as spelled, values
   * without outer whitespace), from `text`: the scanned bytes up to the head's end as one latin1 string.
   */
  target(text: string): string {
    return text.substring(this.targetStart, this.targetEnd);
  }

  rawHeaders(text: string): string[] {
    const at = this.fields.at;
    const out: string[] = [];
    for (let k = 0; k < this.fields.count; k += 5) out.push(text.substring(at[k], at[k + 1]), text.substring(at[k + 2], at[k + 3]));
    return out;
  }
}

/**
 * Reads a request head from `from` in `buf` into `out`: `METHOD /target HTTP/1.1` with one of the usual methods and a
 * path of plain URI bytes, then fields as for answers, framed by one Content-Length or none. Also declined: Expect
 * (answered by the gateway through the slow path) and a head longer than `maxBytes`. false: the caller gives the
 * bytes to llhttp, which accepts or refuses them as before.
 */
export function scanRequestHead(buf: Uint8Array, from: number, maxBytes: number, out: RequestHeadScan): boolean {
  const stop = Math.min(buf.length, from + maxBytes);
  const fieldsStart = scanRequestLine(buf, from, stop, out);
  if (fieldsStart === -1) return false;
  const fields = out.fields;
  const end = scanFields(buf, fieldsStart, stop, fields, 'expect');
  if (end === -1 || fields.flagged) return false;
  out.fieldsStart = fieldsStart;
  out.length = fields.length;
  out.keepAlive = fields.keepAlive;
  out.end = end;
  return true;
}

/**
 * The request line of scanRequestHead, from `from`: sets the method and where the target lies in `out`, and returns
 * where the field lines start; -1 to decline.
 */
export function scanRequestLine(buf: Uint8Array, from: number, stop: number, out: RequestHeadScan): number {
  let i = from;
  let method = -1;
  for (let m = 0; m < METHOD_BYTES.length; m++) {
    const bytes = METHOD_BYTES[m];
    if (stop - i <= bytes.length) continue;
    let k = 0;
    while (k < bytes.length && buf[i + k] === bytes[k]) k++;
    if (k === bytes.length) {
      method = m;
      i += k;
      break;
    }
  }
  if (method === -1 || buf[i] !== 0x2f) return -1;
  const targetStart = i;
  while (i < stop && TARGET[buf[i]] === 1) i++;
  const targetEnd = i;
  if (stop - i < HTTP11_CRLF.length) return -1;
  for (let k = 0; k < HTTP11_CRLF.length; k++) if (buf[i + k] !== HTTP11_CRLF[k]) return -1;
  out.method = METHODS[method];
  out.targetStart = targetStart;
  out.targetEnd = targetEnd;
  return i + HTTP11_CRLF.length;
}
