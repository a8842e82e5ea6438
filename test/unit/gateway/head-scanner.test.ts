import { RequestHeadScan, ResponseHead, scanRequestHead, scanResponseHead } from '../../../src/gateway/head-scanner';
import { forwardedResponseHeaders } from '../../../src/gateway/hop-by-hop';
import { HTTPParser, METHODS, SKIP_BODY_AND_UPGRADE } from '../../../src/gateway/http-parser';

/** What llhttp (strict, as the gateway runs it) makes of a response head: refused, or its status, fields and framing. */
function llhttp(bytes: Buffer): { ok: false } | { ok: true; status: number; fields: string[]; keepAlive: boolean } {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
  let head: { status: number; fields: string[]; keepAlive: boolean } | undefined;
  const partial: string[] = [];
  parser[HTTPParser.kOnHeaders] = (h: string[]) => partial.push(...h);
  parser[HTTPParser.kOnHeadersComplete] = (
    _major: number,
    _minor: number,
    fields: string[] | undefined,
    _method: unknown,
    _url: unknown,
    status: number,
    _message: string,
    _upgrade: boolean,
    keepAlive: boolean,
  ) => {
    head = { status, fields: fields ?? partial, keepAlive };
    return SKIP_BODY_AND_UPGRADE;
  };
  const result = parser.execute(bytes);
  parser.close();
  if (typeof result !== 'number' || head === undefined) return { ok: false };
  return { ok: true, ...head };
}

/** The field lines the scanner keeps, as text. */
function keptLines(bytes: Buffer, head: ResponseHead): string {
  let out = '';
  for (let k = 0; k < head.keptCount; k += 2) out += bytes.subarray(head.kept[k], head.kept[k + 1]).toString('latin1');
  return out;
}

const OK = 'HTTP/1.1 200 OK\r\n';
const head = (...lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

/** Heads the scanner must read, each exactly as llhttp does. */
const accepted: [string, Buffer][] = [
  [
    'the agent answer',
    head(
      'HTTP/1.1 200 OK',
      'content-type: application/json',
      'content-length: 213',
      'Date: Thu, 26 Nov 2026 23:37:32 GMT',
      'Connection: keep-alive',
      'Keep-Alive: timeout=65',
    ),
  ],
  ['Connection: close', head('HTTP/1.1 404 Not Found', 'Content-Length: 0', 'Connection: close')],
  [
    'CLOSE in capitals, tabs before a value',
    head('HTTP/1.1 500 Internal Server Error', 'content-length:\t\t7', 'connection: CLOSE', 'x-a:b'),
  ],
  ['an empty reason and an empty value', head('HTTP/1.1 299 ', 'x-empty:', 'Content-Length: 000012')],
  [
    'the other hop-by-hop fields',
    head(
      OK.trim(),
      'TE: trailers',
      'Trailer: x',
      'Proxy-Authenticate: Basic',
      'Proxy-Connection: keep-alive',
      'Expect: 100-continue',
      'Content-Length: 3',
    ),
  ],
];

/** Heads the scanner must leave to llhttp (which accepts some and refuses others). */
const declined: [string, Buffer][] = [
  ['HTTP/1.0', head('HTTP/1.0 200 OK', 'Content-Length: 1')],
  ['HTTP/2', head('HTTP/2.0 200 OK', 'Content-Length: 1')],
  ['a 1xx', head('HTTP/1.1 103 Early Hints', 'Link: </a>')],
  ['101', head('HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade')],
  ['204', head('HTTP/1.1 204 No Content', 'Content-Length: 0')],
  ['304', head('HTTP/1.1 304 Not Modified', 'Content-Length: 5')],
  ['no Content-Length', head(OK.trim(), 'content-type: text/plain')],
  ['chunked', head(OK.trim(), 'Transfer-Encoding: chunked')],
  ['Content-Length and Transfer-Encoding', head(OK.trim(), 'Content-Length: 5', 'Transfer-Encoding: chunked')],
  ['a repeated Content-Length', head(OK.trim(), 'Content-Length: 5', 'Content-Length: 5')],
  ['a Content-Length list', head(OK.trim(), 'Content-Length: 5, 5')],
  ['a signed Content-Length', head(OK.trim(), 'Content-Length: +5')],
  ['an empty Content-Length', head(OK.trim(), 'Content-Length:')],
  ['a 16-digit Content-Length', head(OK.trim(), 'Content-Length: 1234567890123456')],
  ['a space before the colon', head(OK.trim(), 'Content-Length : 5')],
  ['a folded line', head(OK.trim(), 'Content-Length: 5', 'X-A: b', ' c')],
  ['a bare LF in a field', Buffer.from(`${OK}Content-Length: 5\nX-A: b\r\n\r\n`)],
  ['a bare LF ending the head', Buffer.from(`${OK}Content-Length: 5\r\n\n`)],
  ['a bare CR', Buffer.from(`${OK}Content-Length: 5\rX: y\r\n\r\n`)],
  ['trailing whitespace', head(OK.trim(), 'Content-Length: 5 ')],
  ['obs-text in a value', head(OK.trim(), 'Content-Length: 5', 'X-A: caf\xe9')],
  ['a control byte in a value', head(OK.trim(), 'Content-Length: 5', 'X-A: a\x01b')],
  ['a NUL in a name', head(OK.trim(), 'Content-Length: 5', 'X-\0A: b')],
  ['an invalid name byte', head(OK.trim(), 'Content-Length: 5', 'X(A): b')],
  ['a line without a colon', head(OK.trim(), 'Content-Length: 5', 'junk')],
  ['a Connection listing a field', head(OK.trim(), 'Content-Length: 5', 'Connection: x-hop', 'X-Hop: 1')],
  ['two Connection fields', head(OK.trim(), 'Content-Length: 5', 'Connection: keep-alive', 'Connection: close')],
  ['Upgrade', head(OK.trim(), 'Content-Length: 5', 'Upgrade: h2c')],
  ['Via', head(OK.trim(), 'Content-Length: 5', 'Via: 1.1 other')],
  ['a non-digit status', head('HTTP/1.1 2x0 OK', 'Content-Length: 5')],
  ['a status of four digits', head('HTTP/1.1 2000 OK', 'Content-Length: 5')],
  ['a status 600', head('HTTP/1.1 600 Odd', 'Content-Length: 5')],
  ['a tab in the reason', head('HTTP/1.1 200 O\tK', 'Content-Length: 5')],
  ['no space after the status', head('HTTP/1.1 200', 'Content-Length: 5')],
  ['lower-case version', head('http/1.1 200 OK', 'Content-Length: 5')],
  ['65 fields', head(OK.trim(), 'Content-Length: 5', ...Array.from({ length: 64 }, (_, n) => `x-${n}: ${n}`))],
];

describe('scanResponseHead', () => {
  it.each(accepted)('reads %s as llhttp does, keeping the fields the gateway forwards', (_name, bytes) => {
    const scanned = new ResponseHead();
    expect(scanResponseHead(bytes, 0, 16384, scanned)).toBe(true);
    const parsed = llhttp(bytes);
    if (!parsed.ok) throw new Error('llhttp refused a head the scanner accepted');
    expect(scanned.status).toBe(parsed.status);
    expect(scanned.keepAlive).toBe(parsed.keepAlive);
    expect(scanned.end).toBe(bytes.length);
    const lengthAt = parsed.fields.findIndex((f, i) => i % 2 === 0 && f.toLowerCase() === 'content-length');
    expect(scanned.length).toBe(Number(parsed.fields[lengthAt + 1]));
    // The lines kept are the fields the slow path forwards (without the Via it appends), in order.
    const { fields } = forwardedResponseHeaders(parsed.fields, 'v');
    const expected = fields.slice(0, -2);
    const lines = keptLines(bytes, scanned).split('\r\n').slice(0, -1);
    expect(lines.map((l) => l.slice(0, l.indexOf(':')))).toEqual(expected.filter((_, i) => i % 2 === 0));
    expect(lines.map((l) => l.slice(l.indexOf(':') + 1).trim())).toEqual(expected.filter((_, i) => i % 2 === 1));
  });

  it.each(declined)('leaves %s to llhttp', (_name, bytes) => {
    expect(scanResponseHead(bytes, 0, 16384, new ResponseHead())).toBe(false);
  });

  it('leaves a head that is not whole in the bytes, or longer than the limit, to llhttp', () => {
    const bytes = head('HTTP/1.1 200 OK', 'Content-Length: 5', 'X-A: b');
    for (let cut = 0; cut < bytes.length; cut++) expect(scanResponseHead(bytes.subarray(0, cut), 0, 16384, new ResponseHead())).toBe(false);
    expect(scanResponseHead(bytes, 0, bytes.length - 1, new ResponseHead())).toBe(false);
    expect(scanResponseHead(bytes, 0, bytes.length, new ResponseHead())).toBe(true);
  });

  it('reads from an offset, and ends where the body starts', () => {
    const bytes = Buffer.concat([Buffer.from('xx'), head('HTTP/1.1 201 Created', 'Content-Length: 5'), Buffer.from('hello')]);
    const scanned = new ResponseHead();
    expect(scanResponseHead(bytes, 2, 16384, scanned)).toBe(true);
    expect(bytes.subarray(scanned.end).toString()).toBe('hello');
    expect(scanned.status).toBe(201);
  });

  it('declines every byte outside its grammar, whatever llhttp then makes of it', () => {
    // One byte of every value put into a name, a value and the reason: accepted only where the grammar allows it,
    // and then llhttp accepts it too.
    for (let b = 0; b < 256; b++) {
      const c = String.fromCharCode(b);
      for (const bytes of [
        head(OK.trim(), 'Content-Length: 1', `X${c}Y: v`),
        head(OK.trim(), 'Content-Length: 1', `X: a${c}b`),
        head(`HTTP/1.1 200 O${c}K`, 'Content-Length: 1'),
      ]) {
        if (scanResponseHead(bytes, 0, 16384, new ResponseHead())) expect(llhttp(bytes).ok).toBe(true);
      }
    }
  });
});

/** What llhttp (strict, as the gateway runs it) makes of a request head: refused, or what the gateway takes from it. */
function llhttpRequest(
  bytes: Buffer,
): { ok: false } | { ok: true; method: string; url: string; fields: string[]; keepAlive: boolean; upgrade: boolean } {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.REQUEST, {}, 16384, HTTPParser.kLenientNone);
  let head: { method: string; url: string; fields: string[]; keepAlive: boolean; upgrade: boolean } | undefined;
  const partial: string[] = [];
  let partialUrl = '';
  parser[HTTPParser.kOnHeaders] = (h: string[], url: string) => {
    partial.push(...h);
    partialUrl += url;
  };
  parser[HTTPParser.kOnHeadersComplete] = (
    _major: number,
    _minor: number,
    fields: string[] | undefined,
    method: number,
    url: string | undefined,
    _status: number,
    _message: string,
    upgrade: boolean,
    keepAlive: boolean,
  ) => {
    head = { method: METHODS[method], url: url ?? partialUrl, fields: fields ?? partial, keepAlive, upgrade };
    return SKIP_BODY_AND_UPGRADE;
  };
  const result = parser.execute(bytes);
  parser.close();
  if (typeof result !== 'number' || head === undefined) return { ok: false };
  return { ok: true, ...head };
}

const req = (start: string, ...lines: string[]) => Buffer.from(`${[start, ...lines].join('\r\n')}\r\n\r\n`, 'latin1');
const POST = 'POST /filesystem.Filesystem/Stat HTTP/1.1';

const acceptedRequests: [string, Buffer][] = [
  [
    'the SDK call',
    req(
      POST,
      'Host: 127.0.0.1:3000',
      'Content-Length: 33',
      'Content-Type: application/json',
      'Connect-Protocol-Version: 1',
      'E2b-Sandbox-Id: benchsandbox',
      'X-Access-Token: bench-access-token',
    ),
  ],
  ['a GET without a body, Connection: close', req('GET /files?path=%2Ftmp%2Fa&username=user HTTP/1.1', 'host: x', 'connection: close')],
  ['each method', req('DELETE /a HTTP/1.1', 'Content-Length: 0')],
  ['PUT', req('PUT /a HTTP/1.1', 'Content-Length: 2')],
  ['PATCH', req('PATCH /a HTTP/1.1', 'Content-Length: 2', 'Connection: Keep-Alive')],
  ['HEAD', req('HEAD / HTTP/1.1')],
  ['OPTIONS', req("OPTIONS /a:b@c!$&'()*+,;=-._~ HTTP/1.1")],
  [
    'repeated plain fields, empty and tab-led values',
    req('GET / HTTP/1.1', 'X-A: 1', 'x-a: 2', 'Cookie: a=b', 'Cookie: c=d', 'X-E:', 'X-T:\t\tv'),
  ],
];

const declinedRequests: [string, Buffer][] = [
  ['HTTP/1.0', req('GET / HTTP/1.0')],
  ['HTTP/2', req('GET / HTTP/2.0')],
  ['CONNECT', req('CONNECT a:443 HTTP/1.1')],
  ['an unknown method', req('PROPFIND / HTTP/1.1')],
  ['a lower-case method', req('get / HTTP/1.1')],
  ['absolute form', req('GET http://other/ HTTP/1.1')],
  ['asterisk form', req('OPTIONS * HTTP/1.1')],
  ['two spaces after the method', req('GET  / HTTP/1.1')],
  ['a space in the target', req('GET /a b HTTP/1.1')],
  ['a fragment', req('GET /a#b HTTP/1.1')],
  ['Content-Length and Transfer-Encoding', req(POST, 'Content-Length: 5', 'Transfer-Encoding: chunked')],
  ['Transfer-Encoding then Content-Length', req(POST, 'Transfer-Encoding: chunked', 'Content-Length: 5')],
  ['chunked', req(POST, 'Transfer-Encoding: chunked')],
  ['two equal Content-Length', req(POST, 'Content-Length: 5', 'Content-Length: 5')],
  ['two different Content-Length', req(POST, 'Content-Length: 5', 'Content-Length: 6')],
  ['a Content-Length list', req(POST, 'Content-Length: 5,5')],
  ['a negative Content-Length', req(POST, 'Content-Length: -1')],
  ['a hex Content-Length', req(POST, 'Content-Length: 0x5')],
  ['a folded line', req(POST, 'Content-Length: 5', 'X-A: b', '\tc')],
  ['a bare LF', Buffer.from(`${POST}\r\nContent-Length: 5\nX: y\r\n\r\n`)],
  ['a bare LF after the request line', Buffer.from(`${POST}\nContent-Length: 5\r\n\r\n`)],
  ['a space before the colon', req(POST, 'Content-Length : 5')],
  ['a space in a name', req(POST, 'Content Length: 5')],
  ['an invalid name byte', req(POST, 'X{A}: b')],
  ['trailing whitespace', req(POST, 'Content-Length: 5\t')],
  ['obs-text', req(POST, 'X-A: \xff')],
  ['Upgrade', req('GET /ws HTTP/1.1', 'Connection: Upgrade', 'Upgrade: websocket')],
  ['Upgrade alone', req('GET /ws HTTP/1.1', 'Upgrade: websocket')],
  ['a Connection list', req('GET / HTTP/1.1', 'Connection: keep-alive, x-hop')],
  ['Expect', req(POST, 'Content-Length: 5', 'Expect: 100-continue')],
  ['65 fields', req('GET / HTTP/1.1', ...Array.from({ length: 65 }, (_, n) => `x-${n}: ${n}`))],
];

describe('scanRequestHead', () => {
  it.each(acceptedRequests)('reads %s as llhttp does', (_name, bytes) => {
    const scan = new RequestHeadScan();
    expect(scanRequestHead(bytes, 0, 16384, scan)).toBe(true);
    const parsed = llhttpRequest(bytes);
    if (!parsed.ok) throw new Error('llhttp refused a head the scanner accepted');
    expect(parsed.upgrade).toBe(false);
    expect(scan.method).toBe(parsed.method);
    const text = bytes.toString('latin1', 0, scan.end);
    expect(scan.target(text)).toBe(parsed.url);
    expect(scan.rawHeaders(text)).toEqual(parsed.fields);
    expect(scan.keepAlive).toBe(parsed.keepAlive);
    expect(scan.end).toBe(bytes.length);
    const lengthAt = parsed.fields.findIndex((f, i) => i % 2 === 0 && f.toLowerCase() === 'content-length');
    expect(scan.length).toBe(lengthAt < 0 ? -1 : Number(parsed.fields[lengthAt + 1]));
  });

  it.each(declinedRequests)('leaves %s to llhttp', (_name, bytes) => {
    expect(scanRequestHead(bytes, 0, 16384, new RequestHeadScan())).toBe(false);
  });

  it('leaves a head not whole in the bytes, or longer than --max-header-bytes, to llhttp; ends where the body starts', () => {
    const bytes = Buffer.concat([req(POST, 'Content-Length: 5', 'X-A: b'), Buffer.from('hello')]);
    const headLength = bytes.length - 5;
    for (let cut = 0; cut < headLength; cut++) expect(scanRequestHead(bytes.subarray(0, cut), 0, 16384, new RequestHeadScan())).toBe(false);
    expect(scanRequestHead(bytes, 0, headLength - 1, new RequestHeadScan())).toBe(false);
    const scan = new RequestHeadScan();
    expect(scanRequestHead(bytes, 0, headLength, scan)).toBe(true);
    expect(bytes.subarray(scan.end).toString()).toBe('hello');
    expect(scan.length).toBe(5);
  });

  it('takes no byte llhttp would refuse, in a name, a value or the target', () => {
    let taken = 0;
    for (let b = 0; b < 256; b++) {
      const c = String.fromCharCode(b);
      for (const bytes of [req(POST, 'Content-Length: 1', `X${c}Y: v`), req(POST, `X: a${c}b`), req(`GET /a${c}b HTTP/1.1`, 'Host: x')]) {
        if (!scanRequestHead(bytes, 0, 16384, new RequestHeadScan())) continue;
        taken++;
        const parsed = llhttpRequest(bytes);
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(bytes.toString('latin1').split(' ')[1]).toBe(parsed.url);
      }
    }
    // The grammar is not empty: most visible bytes are taken somewhere.
    expect(taken).toBeGreaterThan(150);
  });
});
