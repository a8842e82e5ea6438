import { headerMap } from '../../../src/gateway/client-connection';
import { RequestHeadScan, scanRequestHead } from '../../../src/gateway/head-scanner';
import { KeptFields } from '../../../src/gateway/kept-fields';

const MAX = 16 * 1024;

/** Scans a request head in full; undefined when the scanner declines it. */
function scanned(head: string | Buffer) {
  const buf = Buffer.isBuffer(head) ? head : Buffer.from(head, 'latin1');
  const scan = new RequestHeadScan();
  if (!scanRequestHead(buf, 0, MAX, scan)) return undefined;
  const text = buf.toString('latin1', 0, scan.end);
  const rawHeaders = scan.rawHeaders(text);
  const l = scan.fields.lengthAt;
  return {
    buf,
    scan,
    rawHeaders,
    headers: headerMap(rawHeaders),
    read: {
      method: scan.method,
      target: scan.target(text),
      end: scan.end,
      keepAlive: scan.keepAlive,
      digits: l === -1 ? '' : text.slice(scan.fields.at[l + 2], scan.fields.at[l + 3]),
    },
  };
}

/** What readRepeat reads of a head, as the fast path then uses it; undefined when it is not a repeat. */
function repeat(kept: KeptFields, head: string | Buffer) {
  const buf = Buffer.isBuffer(head) ? head : Buffer.from(head, 'latin1');
  const scan = new RequestHeadScan();
  if (!kept.readRepeat(buf, MAX, scan)) return undefined;
  const l = scan.fields.lengthAt;
  const digits = l === -1 ? '' : buf.toString('latin1', scan.fields.at[l + 2], scan.fields.at[l + 3]);
  return {
    read: {
      method: scan.method,
      target: buf.toString('latin1', scan.targetStart, scan.targetEnd),
      end: scan.end,
      keepAlive: scan.keepAlive,
      digits,
    },
    rawHeaders: kept.rawHeadersWith(digits),
    headers: kept.headersWith(digits),
  };
}

const head = (path: string, length?: string, token = 'tok-1', connection = '') =>
  `POST ${path} HTTP/1.1\r\nHost: h\r\nX-Access-Token: ${token}\r\n${length === undefined ? '' : `Content-Length: ${length}\r\n`}` +
  `${connection}Accept: */*\r\n\r\n`;

function entryOf(text: string): KeptFields {
  const s = scanned(text);
  if (s === undefined) throw new Error(`not scanned: ${JSON.stringify(text)}`);
  return KeptFields.of(s.buf, s.scan, s.rawHeaders, s.headers);
}

describe('KeptFields', () => {
  it('a head with the same fields is a repeat whatever its target and Content-Length digits, read as a full scan reads it', () => {
    const kept = entryOf(head('/a', '7'));
    for (const [method, path, length] of [
      ['POST', '/a', '7'],
      ['POST', '/another/path?x=1', '7'],
      ['PUT', '/b', '1234567'],
      ['POST', '/b', '0'],
      ['POST', '/b', '007'],
      ['POST', '/b', '123456789012345'],
    ]) {
      const text = head(path, length).replace('POST', method);
      const full = scanned(text);
      const fast = repeat(kept, text);
      expect(fast).toEqual({ read: full?.read, rawHeaders: full?.rawHeaders, headers: full?.headers });
      // Followed by a body and the next request, it still ends where the head ends.
      expect(repeat(kept, `${text}{"x":1}GET / HTTP/1.1\r\n`)?.read.end).toBe(full?.read.end);
    }
  });

  it("a head without Content-Length repeats only an entry without one; keep-alive is the entry's own", () => {
    const none = entryOf(head('/a'));
    const withLength = entryOf(head('/a', '5'));
    const full = scanned(head('/b'));
    expect(repeat(none, head('/b'))).toEqual({ read: full?.read, rawHeaders: full?.rawHeaders, headers: full?.headers });
    expect(repeat(withLength, head('/b'))).toBeUndefined();
    expect(repeat(none, head('/b', '5'))).toBeUndefined();
    const closing = entryOf(head('/a', '5', 'tok-1', 'Connection: close\r\n'));
    expect(repeat(closing, head('/b', '9', 'tok-1', 'Connection: close\r\n'))?.read.keepAlive).toBe(false);
  });

  it('declines 16 digits, no digits, and a head longer than the limit', () => {
    const kept = entryOf(head('/a', '7'));
    expect(repeat(kept, head('/a', '1234567890123456'))).toBeUndefined();
    expect(repeat(kept, head('/a', ''))).toBeUndefined();
    const buf = Buffer.from(head('/a', '7'), 'latin1');
    expect(kept.readRepeat(buf, buf.length - 1, new RequestHeadScan())).toBe(false);
    expect(kept.readRepeat(buf, buf.length, new RequestHeadScan())).toBe(true);
    // Cut short: the head is not whole in these bytes.
    expect(kept.readRepeat(buf.subarray(0, buf.length - 1), MAX, new RequestHeadScan())).toBe(false);
  });

  it('any other difference in the field bytes is not a repeat', () => {
    const kept = entryOf(head('/a', '7'));
    const others = [
      head('/a', '7', 'tok-2'),
      head('/a', '7', 'tok-10'),
      head('/a', '7').replace('Accept', 'accept'),
      head('/a', '7').replace('Host: h', 'Host: H'),
      head('/a', '7').replace('Content-Length', 'content-length'),
      head('/a', '7').replace('Content-Length: ', 'Content-Length:'),
      head('/a', '7').replace('Accept: */*\r\n', ''),
      head('/a', '7').replace('Accept: */*\r\n', 'Accept: */*\r\nX-More: 1\r\n'),
      head('/a', '7').replace('Content-Length: 7\r\nAccept: */*', 'Accept: */*\r\nContent-Length: 7'),
      head('/a', '7').replace('HTTP/1.1', 'HTTP/1.0'),
      head('/a', '7').replace('POST', 'TRACE'),
    ];
    for (const text of others) expect([text, repeat(kept, text)]).toEqual([text, undefined]);
  });

  it('every one-byte change of a head: a repeat only where the full scan reads the same fields, and then read the same', () => {
    const original = head('/a', '42', 'tok-1', 'Connection: keep-alive\r\n');
    const kept = entryOf(original);
    const base = Buffer.from(original, 'latin1');
    let repeats = 0;
    for (let at = 0; at < base.length; at++) {
      for (let byte = 0; byte < 256; byte++) {
        if (byte === base[at]) continue;
        const buf = Buffer.from(base);
        buf[at] = byte;
        const fast = repeat(kept, buf);
        if (fast === undefined) continue;
        repeats++;
        const full = scanned(buf);
        expect(fast).toEqual({ read: full?.read, rawHeaders: full?.rawHeaders, headers: full?.headers });
      }
    }
    // Only the target's and the length's bytes may change: each to the other bytes a target or a digit may be.
    expect(repeats).toBeGreaterThan(0);
  });

  it('an entry keeps copies of the bytes and freezes what it hands out', () => {
    const s = scanned(head('/a', '7'));
    if (s === undefined) throw new Error('not scanned');
    const kept = KeptFields.of(s.buf, s.scan, s.rawHeaders, s.headers);
    s.buf.fill(0x41);
    expect(repeat(kept, head('/b', '7'))).toBeDefined();
    expect(Object.isFrozen(kept.rawHeaders)).toBe(true);
    expect(Object.isFrozen(kept.headers)).toBe(true);
    // A different length gives new objects; the entry's stay as they were.
    expect(kept.headersWith('9')['content-length']).toBe('9');
    expect(kept.headers['content-length']).toBe('7');
  });
});
