import { endToEndHeaders } from '../../../src/gateway/hop-by-hop';

describe('endToEndHeaders', () => {
  it('drops the hop-by-hop fields of RFC 9110 and keeps end-to-end ones', () => {
    const out = endToEndHeaders(
      {
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'proxy-connection': 'keep-alive',
        te: 'trailers',
        'transfer-encoding': 'chunked',
        upgrade: 'websocket',
        'proxy-authorization': 'Basic eDp5',
        expect: '100-continue',
        'content-type': 'application/json',
        'x-access-token': 'secret',
        authorization: 'Basic dXNlcjo=',
        'connect-timeout-ms': '500',
      },
      '1.1 gw',
    );
    expect(out).toEqual({
      'content-type': 'application/json',
      'x-access-token': 'secret',
      authorization: 'Basic dXNlcjo=',
      'connect-timeout-ms': '500',
      via: '1.1 gw',
    });
  });

  it('drops fields that the Connection header names', () => {
    const out = endToEndHeaders({ connection: 'close, X-Session-Hint ,x-other', 'x-session-hint': '1', 'x-other': '2', 'x-kept': '3' }, '1.1 gw');
    expect(out).toEqual({ 'x-kept': '3', via: '1.1 gw' });
  });

  it('appends to an existing Via', () => {
    expect(endToEndHeaders({ via: '1.0 edge' }, '1.1 gw').via).toBe('1.0 edge, 1.1 gw');
  });

  it('keeps repeated fields as lists', () => {
    expect(endToEndHeaders({ 'set-cookie': ['a=1', 'b=2'] }, 'v')['set-cookie']).toEqual(['a=1', 'b=2']);
  });
});
