import { forwardedRequestHeaders, forwardedResponseHeaders, listedInConnection } from '../../../src/gateway/hop-by-hop';

/** Node's lower-cased view of a raw header list, as the gateway gets it beside rawHeaders. */
function view(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    out[name] = out[name] === undefined ? raw[i + 1] : `${out[name]}, ${raw[i + 1]}`;
  }
  return out;
}

const forwarded = (raw: string[], remote?: string) => forwardedRequestHeaders(raw, view(raw), '1.1 gw', remote);

describe('forwardedRequestHeaders', () => {
  it('drops the hop-by-hop fields of RFC 9110 and both framing fields, keeps end-to-end ones in order and spelling', () => {
    const out = forwarded([
      'Connection',
      'keep-alive',
      'Keep-Alive',
      'timeout=5',
      'Proxy-Connection',
      'keep-alive',
      'TE',
      'trailers',
      'Transfer-Encoding',
      'chunked',
      'Content-Length',
      '5',
      'Upgrade',
      'websocket',
      'Proxy-Authorization',
      'Basic eDp5',
      'Expect',
      '100-continue',
      'Trailer',
      'x-checksum',
      'Content-Type',
      'application/json',
      'X-Access-Token',
      'secret',
      'authorization',
      'Basic dXNlcjo=',
      'Connect-Timeout-Ms',
      '500',
    ]);
    expect(out).toEqual([
      'Content-Type',
      'application/json',
      'X-Access-Token',
      'secret',
      'authorization',
      'Basic dXNlcjo=',
      'Connect-Timeout-Ms',
      '500',
      'via',
      '1.1 gw',
    ]);
  });

  it('drops fields that the Connection header names', () => {
    const out = forwarded(['Connection', 'close, X-Session-Hint ,x-other', 'X-Session-Hint', '1', 'x-other', '2', 'x-kept', '3']);
    expect(out).toEqual(['x-kept', '3', 'via', '1.1 gw']);
  });

  it("never lets Connection remove the framing: Content-Length and Transfer-Encoding are the gateway's to write", () => {
    expect(listedInConnection('content-length, transfer-encoding, x-a')).toEqual(new Set(['x-a']));
    expect(listedInConnection('Content-Length')).toBeUndefined();
    expect(listedInConnection('keep-alive')).toBeUndefined();
    expect(listedInConnection(['close', 'X-B'])).toEqual(new Set(['x-b']));
  });

  it('appends to an existing Via and X-Forwarded-For, merging repeated ones', () => {
    const out = forwarded(['Via', '1.0 edge', 'via', '1.1 lb', 'X-Forwarded-For', '10.0.0.1', 'x-forwarded-for', '10.0.0.2'], '127.0.0.9');
    expect(out).toEqual(['x-forwarded-for', '10.0.0.1, 10.0.0.2, 127.0.0.9', 'via', '1.0 edge, 1.1 lb, 1.1 gw']);
  });

  it('keeps repeated end-to-end fields as separate lines', () => {
    expect(forwarded(['Cookie', 'a=1', 'Cookie', 'b=2'])).toEqual(['Cookie', 'a=1', 'Cookie', 'b=2', 'via', '1.1 gw']);
  });

  it("puts a sandbox's request host mask in place of every Host the client sent, and adds it when none was sent", () => {
    const raw = ['Host', '3000-abc.example.com', 'X-A', '1', 'host', 'second.example.com'];
    expect(forwardedRequestHeaders(raw, view(raw), '1.1 gw', undefined, undefined, 'localhost:3000')).toEqual([
      'host',
      'localhost:3000',
      'X-A',
      '1',
      'via',
      '1.1 gw',
    ]);
    expect(forwardedRequestHeaders(['X-A', '1'], view(['X-A', '1']), '1.1 gw', undefined, undefined, 'app.test')).toEqual([
      'host',
      'app.test',
      'X-A',
      '1',
      'via',
      '1.1 gw',
    ]);
    // Without a mask the client's Host passes as sent.
    expect(forwarded(raw.slice(0, 4))).toEqual(['Host', '3000-abc.example.com', 'X-A', '1', 'via', '1.1 gw']);
  });
});

describe('forwardedResponseHeaders', () => {
  it("keeps the sandbox's Content-Length (it frames the answer to the client) and drops hop-by-hop fields", () => {
    const out = forwardedResponseHeaders(
      [
        'Content-Type',
        'text/plain',
        'Content-Length',
        '12',
        'Connection',
        'keep-alive, X-Internal',
        'Keep-Alive',
        'timeout=5',
        'X-Internal',
        'y',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
      ],
      '1.1 gw',
    );
    expect(out).toEqual({
      fields: ['Content-Type', 'text/plain', 'Content-Length', '12', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'via', '1.1 gw'],
      hasLength: true,
    });
  });

  it("drops the sandbox's Transfer-Encoding (the gateway frames the body to the client itself) and appends Via", () => {
    expect(forwardedResponseHeaders(['Transfer-Encoding', 'chunked', 'Via', '1.1 agent'], '1.1 gw')).toEqual({
      fields: ['via', '1.1 agent, 1.1 gw'],
      hasLength: false,
    });
  });
});
