import { headerMap } from '../../../src/gateway/client-connection';
import { RequestHeadScan, scanRequestHead } from '../../../src/gateway/head-scanner';
import { KeptFields } from '../../../src/gateway/kept-fields';

/** Scans a request head and returns the scan, its bytes, and its fields read the slow way. */
function scanned(head: string) {
  const buf = Buffer.from(head, 'latin1');
  const scan = new RequestHeadScan();
  if (!scanRequestHead(buf, 0, 16 * 1024, scan)) throw new Error(`not scanned: ${JSON.stringify(head)}`);
  const text = buf.toString('latin1', 0, scan.end);
  const rawHeaders = scan.rawHeaders(text);
  return { buf, scan, rawHeaders, headers: headerMap(rawHeaders) };
}

const head = (path: string, length?: string, token = 'tok-1') =>
  `POST ${path} HTTP/1.1\r\nHost: h\r\nX-Access-Token: ${token}\r\n${length === undefined ? '' : `Content-Length: ${length}\r\n`}Accept: */*\r\n\r\n`;

function entryOf(text: string): KeptFields {
  const s = scanned(text);
  return KeptFields.of(s.buf, s.scan, s.rawHeaders, s.headers);
}

describe('KeptFields', () => {
  it('a head with the same fields repeats the entry, whatever its target and Content-Length digits', () => {
    const kept = entryOf(head('/a', '7'));
    for (const [path, length] of [
      ['/a', '7'],
      ['/another/path', '7'],
      ['/b', '1234567'],
      ['/b', '0'],
      ['/b', '007'],
    ]) {
      const next = scanned(head(path, length));
      expect(kept.repeatedIn(next.buf, next.scan)).toBe(true);
      // What the entry gives is what reading the head the slow way gives.
      expect(kept.rawHeadersWith(length)).toEqual(next.rawHeaders);
      expect(kept.headersWith(length)).toEqual(next.headers);
    }
  });

  it('a head without Content-Length repeats only an entry without one', () => {
    const none = entryOf(head('/a'));
    const withLength = entryOf(head('/a', '5'));
    const next = scanned(head('/b'));
    expect(none.repeatedIn(next.buf, next.scan)).toBe(true);
    expect(none.rawHeadersWith('')).toEqual(next.rawHeaders);
    expect(withLength.repeatedIn(next.buf, next.scan)).toBe(false);
    const other = scanned(head('/b', '5'));
    expect(none.repeatedIn(other.buf, other.scan)).toBe(false);
  });

  it('any other difference in the field bytes is not a repeat', () => {
    const kept = entryOf(head('/a', '7'));
    const others = [
      head('/a', '7', 'tok-2'),
      head('/a', '7', 'tok-10'),
      head('/a', '7').replace('Accept', 'accept'),
      head('/a', '7').replace('Host: h', 'Host: H'),
      head('/a', '7').replace('Content-Length', 'content-length'),
      head('/a', '7').replace('Accept: */*\r\n', ''),
      head('/a', '7').replace('Accept: */*\r\n', 'Accept: */*\r\nX-More: 1\r\n'),
      head('/a', '7').replace('Content-Length: 7\r\nAccept: */*', 'Accept: */*\r\nContent-Length: 7'),
    ];
    for (const text of others) {
      const next = scanned(text);
      expect([text, kept.repeatedIn(next.buf, next.scan)]).toEqual([text, false]);
    }
  });

  it('an entry keeps copies of the bytes and freezes what it hands out', () => {
    const s = scanned(head('/a', '7'));
    const kept = KeptFields.of(s.buf, s.scan, s.rawHeaders, s.headers);
    s.buf.fill(0x41);
    const next = scanned(head('/b', '7'));
    expect(kept.repeatedIn(next.buf, next.scan)).toBe(true);
    expect(Object.isFrozen(kept.rawHeaders)).toBe(true);
    expect(Object.isFrozen(kept.headers)).toBe(true);
    // A different length gives new objects; the entry's stay as they were.
    expect(kept.headersWith('9')['content-length']).toBe('9');
    expect(kept.headers['content-length']).toBe('7');
  });
});
