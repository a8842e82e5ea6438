/**
 * A strict reader of the one response head shape that carries almost every answer: `HTTP/1.1`, a final status with a
 * body, one `Content-Length`, plain fields. It reads the bytes where they lie and makes no strings, so an answer's
 * head can go on to the client as the sandbox wrote it, with only the hop-by-hop lines left out (the gateway's fast
 * path: see upstream-client.ts).
 *
 * It never decides what llhttp would refuse: anything it does not fully understand (another version, a 1xx, 204 or
 * 304, no or a repeated Content-Length, Transfer-Encoding, Upgrade, a Connection other than `keep-alive` or `close`,
 * Via, a head not whole in these bytes, and every byte outside the strict grammar: bare LF, a space before a colon, a
 * folded line, trailing whitespace, bytes above 0x7E) makes it decline, and the caller hands the bytes to llhttp,
 * which accepts or refuses them as before. What it accepts, llhttp accepts and reads the same way (a unit test holds
 * the two side by side).
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
  i += 2;
  let length = -1;
  let keepAlive = true;
  let connection = false;
  let kept = 0;
  let fields = 0;
  const ranges = out.kept;
  for (;;) {
    if (i + 1 >= stop) return false;
    if (buf[i] === CR) {
      if (buf[i + 1] !== LF) return false;
      i += 2;
      break;
    }
    if (++fields > MAX_FIELDS) return false;
    const start = i;
    while (i < stop && TCHAR[buf[i]] === 1) i++;
    const nameLen = i - start;
    if (nameLen === 0 || i >= stop || buf[i] !== COLON) return false;
    i++;
    while (i < stop && (buf[i] === SP || buf[i] === HTAB)) i++;
    const valueStart = i;
    while (i < stop && TEXT[buf[i]] === 1) i++;
    if (i + 1 >= stop || buf[i] !== CR || buf[i + 1] !== LF) return false;
    const valueEnd = i;
    if (valueEnd > valueStart && (buf[valueEnd - 1] === SP || buf[valueEnd - 1] === HTAB)) return false;
    i += 2;
    if (nameIs(buf, start, nameLen, 'content-length')) {
      const digits = valueEnd - valueStart;
      if (length !== -1 || digits < 1 || digits > 15) return false;
      let n = 0;
      for (let k = valueStart; k < valueEnd; k++) {
        const d = buf[k] - 0x30;
        if (d < 0 || d > 9) return false;
        n = n * 10 + d;
      }
      length = n;
    } else if (nameIs(buf, start, nameLen, 'connection')) {
      if (connection) return false;
      connection = true;
      if (nameIs(buf, valueStart, valueEnd - valueStart, 'close')) keepAlive = false;
      else if (!nameIs(buf, valueStart, valueEnd - valueStart, 'keep-alive')) return false;
      continue;
    } else if (
      nameIs(buf, start, nameLen, 'transfer-encoding') ||
      nameIs(buf, start, nameLen, 'upgrade') ||
      nameIs(buf, start, nameLen, 'via')
    ) {
      return false;
    } else if (isDropped(buf, start, nameLen)) {
      continue;
    }
    ranges[kept++] = start;
    ranges[kept++] = i;
  }
  if (length === -1) return false;
  out.status = status;
  out.length = length;
  out.keepAlive = keepAlive;
  out.end = i;
  out.keptCount = kept;
  return true;
}
