import { decideRoute, routeFromHost, routingHeadersFor, type RoutingSettings } from '../../../src/gateway/routing';

const svc: RoutingSettings = { brands: routingHeadersFor('Svc'), domain: 'example.test' };

describe('decideRoute', () => {
  it('takes the sandbox from the ID header and leaves the port to the catalog when none is named', () => {
    expect(decideRoute({ 'svc-sandbox-id': 'abc123' }, '/filesystem.Filesystem/Stat', svc)).toEqual({
      ok: true,
      sandboxID: 'abc123',
      port: undefined,
    });
  });

  it('takes the port from the port header', () => {
    expect(decideRoute({ 'svc-sandbox-id': 'abc', 'svc-sandbox-port': '8080' }, '/', svc)).toEqual({
      ok: true,
      sandboxID: 'abc',
      port: 8080,
    });
  });

  it.each(['0', '65536', '-1', '80.5', 'eighty', '', ' 80', '0x50', '123456'])(
    'refuses port header %j with 400 naming the header',
    (port) => {
      const decision = decideRoute({ 'svc-sandbox-id': 'abc', 'svc-sandbox-port': port }, '/', svc);
      expect(decision.ok).toBe(false);
      if (!decision.ok) {
        expect(decision.status).toBe(400);
        expect(decision.message).toContain('Svc-Sandbox-Port');
        expect(decision.message).toContain('1 to 65535');
      }
    },
  );

  it('accepts both ends of the port range', () => {
    expect(decideRoute({ 'svc-sandbox-id': 'a', 'svc-sandbox-port': '1' }, '/', svc)).toMatchObject({ ok: true, port: 1 });
    expect(decideRoute({ 'svc-sandbox-id': 'a', 'svc-sandbox-port': '65535' }, '/', svc)).toMatchObject({ ok: true, port: 65535 });
  });

  it('answers 400 naming the ID header when neither header nor host names a sandbox', () => {
    const decision = decideRoute({ host: 'sandbox.example.test' }, '/', svc);
    expect(decision).toMatchObject({ ok: false, status: 400 });
    if (!decision.ok) expect(decision.message).toContain('missing header Svc-Sandbox-Id');
  });

  it.each(['a b', 'a,b', 'a/../b', 'x.y', '-abc', 'a'.repeat(64), ''])('refuses sandbox ID %j', (id) => {
    const decision = decideRoute({ 'svc-sandbox-id': id }, '/', svc);
    expect(decision).toMatchObject({ ok: false, status: 400 });
    if (!decision.ok) expect(decision.message).toContain('Svc-Sandbox-Id');
  });

  it('routes by the host form when the ID header is absent', () => {
    expect(decideRoute({ host: '49983-abc123.example.test' }, '/', svc)).toEqual({ ok: true, sandboxID: 'abc123', port: 49983 });
  });

  it('routes by the sandbox the access token names when neither header nor host does (the agent port)', () => {
    expect(decideRoute({ host: 'localhost:49983', 'x-access-token': 'abc123.Secret0' }, '/files', svc)).toEqual({
      ok: true,
      sandboxID: 'abc123',
      port: undefined,
    });
    expect(decideRoute({ host: '3000-other.example.test', 'x-access-token': 'abc123.S' }, '/', svc)).toMatchObject({ sandboxID: 'other' });
    expect(decideRoute({ 'e2b-sandbox-id': 'named', 'x-access-token': 'abc123.S' }, '/', svc)).toMatchObject({ sandboxID: 'named' });
    // A token of another form, or naming no valid ID, routes nowhere: the usual 400.
    for (const token of ['plainsecret', '.abc', 'a b.c', '-x.y']) {
      expect(decideRoute({ 'x-access-token': token }, '/', svc)).toMatchObject({ ok: false, status: 400 });
    }
  });

  it('prefers the headers over the host form', () => {
    expect(decideRoute({ host: '3000-other.example.test', 'svc-sandbox-id': 'abc' }, '/', svc)).toEqual({
      ok: true,
      sandboxID: 'abc',
      port: undefined,
    });
  });

  it('answers to the E2B SDK headers beside the configured brand', () => {
    expect(decideRoute({ 'e2b-sandbox-id': 'abc', 'e2b-sandbox-port': '3000' }, '/', svc)).toEqual({
      ok: true,
      sandboxID: 'abc',
      port: 3000,
    });
    expect(decideRoute({ 'e2b-sandbox-id': 'abc' }, '/', svc)).toEqual({ ok: true, sandboxID: 'abc', port: undefined });
  });

  it('names the E2B header in errors about it', () => {
    const decision = decideRoute({ 'e2b-sandbox-id': 'abc', 'e2b-sandbox-port': '99999' }, '/', svc);
    expect(decision).toMatchObject({ ok: false, status: 400 });
    if (!decision.ok) expect(decision.message).toContain('E2b-Sandbox-Port');
  });

  it('takes the port header of the brand whose ID header named the sandbox', () => {
    expect(decideRoute({ 'e2b-sandbox-id': 'abc', 'svc-sandbox-port': '3000' }, '/', svc)).toEqual({
      ok: true,
      sandboxID: 'abc',
      port: undefined,
    });
    expect(decideRoute({ 'svc-sandbox-id': 'abc', 'e2b-sandbox-port': '3000' }, '/', svc)).toEqual({
      ok: true,
      sandboxID: 'abc',
      port: undefined,
    });
  });

  it('refuses two ID headers that name different sandboxes, and accepts them when they agree', () => {
    const decision = decideRoute({ 'svc-sandbox-id': 'abc', 'e2b-sandbox-id': 'xyz' }, '/', svc);
    expect(decision).toMatchObject({ ok: false, status: 400 });
    if (!decision.ok) expect(decision.message).toMatch(/Svc-Sandbox-Id and E2b-Sandbox-Id name different sandboxes/);
    expect(decideRoute({ 'svc-sandbox-id': 'abc', 'e2b-sandbox-id': 'abc', 'svc-sandbox-port': '8' }, '/', svc)).toEqual({
      ok: true,
      sandboxID: 'abc',
      port: 8,
    });
  });

  it('does not answer to an unrelated brand', () => {
    const other: RoutingSettings = { brands: routingHeadersFor('Acme'), domain: 'example.test' };
    expect(decideRoute({ 'svc-sandbox-id': 'abc' }, '/', other)).toMatchObject({ ok: false });
    expect(decideRoute({ 'acme-sandbox-id': 'abc' }, '/', other)).toMatchObject({ ok: true, sandboxID: 'abc' });
    expect(decideRoute({ 'e2b-sandbox-id': 'abc' }, '/', other)).toMatchObject({ ok: true, sandboxID: 'abc' });
  });

  it('lists the E2B pair once when the brand is E2B itself', () => {
    expect(routingHeadersFor('E2b').map((b) => b.idHeaderName)).toEqual(['E2b-Sandbox-Id']);
    expect(routingHeadersFor('Svc').map((b) => b.idHeaderName)).toEqual(['Svc-Sandbox-Id', 'E2b-Sandbox-Id']);
  });

  it.each(['http://127.0.0.1:22/', '*', 'evil.example:443', undefined])('refuses request target %j that is not a path', (url) => {
    expect(decideRoute({ 'svc-sandbox-id': 'abc' }, url, svc)).toMatchObject({ ok: false, status: 400 });
  });
});

describe('routeFromHost', () => {
  it('ignores the port of the Host header, case and a trailing dot', () => {
    expect(routeFromHost('8080-ABC.Example.Test.:443', 'example.test')).toEqual({ sandboxID: 'abc', port: 8080 });
  });

  it.each([
    'sandbox.example.test',
    '49983-abc.other.test',
    '49983-abc.sub.example.test',
    '70000-abc.example.test',
    'abc-49983.example.test',
    'example.test',
    '49983-.example.test',
  ])('does not route %j', (host) => {
    expect(routeFromHost(host, 'example.test')).toBeUndefined();
  });

  it('does not mistake a longer domain that merely ends the same way', () => {
    expect(routeFromHost('49983-abc.notexample.test', 'example.test')).toBeUndefined();
  });
});
