import { MAX_HEAD_BYTES, parseRequestHead, RequestSplitter, type Split } from '../../../../src/runtime/network/egress-relay/http-requests';

const b = (text: string) => Buffer.from(text, 'latin1');

/** Every request head's host, in order, and whether the splitter gave up, over `chunks` fed one by one. */
function follow(chunks: string[]): { hosts: Array<string | null>; passed: string; error?: string } {
  const splitter = new RequestSplitter();
  const hosts: Array<string | null> = [];
  let passed = '';
  for (const chunk of chunks) {
    const split: Split = splitter.push(b(chunk));
    for (const piece of split.pieces) {
      if (piece.request) hosts.push(piece.request.host);
      passed += piece.bytes.toString('latin1');
    }
    if (split.error) return { hosts, passed, error: split.error };
  }
  return { hosts, passed };
}

const get = (host: string) => `GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

describe('the requests of a kept-alive HTTP/1 connection', () => {
  it('names the host of every request, also pipelined and cut anywhere, and passes every byte on in order', () => {
    const stream = `${get('a.example.com')}${get('b.example.com:8080')}GET /x HTTP/1.0\r\nHost: c.example.com\r\n\r\n`;
    expect(follow([stream])).toEqual({ hosts: ['a.example.com', 'b.example.com', 'c.example.com'], passed: stream });
    // Byte by byte: the same requests; a head is held until it is whole.
    expect(follow([...stream])).toEqual({ hosts: ['a.example.com', 'b.example.com', 'c.example.com'], passed: stream });
  });

  it('skips a body by its Content-Length: a request written in it is body, not a request', () => {
    const hidden = get('denied.example.com');
    const post = `POST /upload HTTP/1.1\r\nHost: a.example.com\r\nContent-Length: ${hidden.length}\r\n\r\n${hidden}`;
    const stream = `${post}${get('b.example.com')}`;
    expect(follow([stream])).toEqual({ hosts: ['a.example.com', 'b.example.com'], passed: stream });
    expect(follow([post.slice(0, 60), post.slice(60), get('b.example.com')]).hosts).toEqual(['a.example.com', 'b.example.com']);
  });

  it('follows a chunked body with extensions and trailers; a request after it is judged', () => {
    const chunked =
      'POST / HTTP/1.1\r\nHost: a.example.com\r\nTransfer-Encoding: chunked\r\n\r\n' +
      `5;ext=1\r\nhello\r\n${(30).toString(16)}\r\n${'GET / HTTP/1.1\r\nHost: d.e\r\n\r\n'.padEnd(30, 'x')}\r\n0\r\nX-Sum: 1\r\n\r\n`;
    const stream = `${chunked}${get('b.example.com')}`;
    expect(follow([stream])).toEqual({ hosts: ['a.example.com', 'b.example.com'], passed: stream });
    expect(follow([...stream]).hosts).toEqual(['a.example.com', 'b.example.com']);
  });

  it('gives up where a server could read the framing another way, passing nothing of that request', () => {
    const cases: Array<[string, RegExp]> = [
      // Bare LF: a server splitting on it would see Host: denied.
      ['GET / HTTP/1.1\nHost: denied.example.com\n\r\nHost: a.example.com\r\n\r\n', /bare CR or LF/],
      ['GET / HTTP/1.1\r\nHost: a.example.com\r\n folded\r\n\r\n', /malformed header line/],
      ['GET / HTTP/1.1\r\nHost : a.example.com\r\n\r\n', /malformed header line/],
      ['POST / HTTP/1.1\r\nHost: a.example.com\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n', /Content-Length/],
      ['POST / HTTP/1.1\r\nHost: a.example.com\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n', /both/],
      ['POST / HTTP/1.1\r\nHost: a.example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', /chunked alone/],
      ['GET / HTTP/2.0\r\nHost: a.example.com\r\n\r\n', /request line/],
    ];
    for (const [stream, error] of cases) {
      const seen = follow([`${get('a.example.com')}${stream}`]);
      expect(seen.error).toMatch(error);
      expect(seen.hosts).toEqual(['a.example.com']);
      expect(seen.passed).toBe(get('a.example.com'));
    }
    expect(follow([`GET / HTTP/1.1\r\nX: ${'y'.repeat(MAX_HEAD_BYTES)}`]).error).toMatch(/longer than/);
    // A chunk longer than its size: its data passes up to the size, then nothing.
    const chunk = 'POST / HTTP/1.1\r\nHost: a.example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello';
    expect(follow([`${chunk}!!\r\n${get('denied.example.com')}`])).toEqual({
      hosts: ['a.example.com'],
      passed: chunk,
      error: expect.stringMatching(/longer than its size/),
    });
  });

  it('names no host for a request without one, with two, or whose URL names another host than its Host', () => {
    expect(follow(['GET / HTTP/1.0\r\n\r\n']).hosts).toEqual([null]);
    expect(follow(['GET / HTTP/1.1\r\nHost: a.example.com\r\nHost: b.example.com\r\n\r\n']).hosts).toEqual([null]);
    expect(follow(['GET http://denied.example.com/ HTTP/1.1\r\nHost: a.example.com\r\n\r\n']).hosts).toEqual([null]);
    expect(follow(['GET http://a.example.com:80/x HTTP/1.1\r\nHost: A.example.com\r\n\r\n']).hosts).toEqual(['a.example.com']);
    expect(follow(['GET http://user@a.example.com/ HTTP/1.1\r\nHost: a.example.com\r\n\r\n']).hosts).toEqual([null]);
    expect(follow(['CONNECT denied.example.com:443 HTTP/1.1\r\nHost: a.example.com\r\n\r\n']).hosts).toEqual([null]);
  });

  it('after a WebSocket upgrade passes the frames on; a request instead of them is still judged', () => {
    const upgrade = 'GET /ws HTTP/1.1\r\nHost: a.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
    const frame = '\x81\x85abcdGET / HTTP/1.1\r\nHost: denied.example.com\r\n\r\n';
    expect(follow([upgrade, frame])).toEqual({ hosts: ['a.example.com'], passed: upgrade + frame });
    expect(follow([upgrade, get('denied.example.com')]).hosts).toEqual(['a.example.com', 'denied.example.com']);
  });

  it('reads a head as a strict server does', () => {
    expect(parseRequestHead('GET / HTTP/1.1\r\nHost: a.example.com\r\nContent-Length: 0')).toEqual({
      method: 'GET',
      host: 'a.example.com',
      body: { kind: 'none' },
      mayUpgrade: false,
    });
    expect(parseRequestHead('GET / HTTP/1.1\r\nHost: a.example.com\r\nX: a\x00b')).toMatch(/control character/);
  });
});
