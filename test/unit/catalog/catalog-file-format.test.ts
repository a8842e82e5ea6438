import { hashAccessToken } from '../../../src/contract/access-token';
import { parseCatalogFile } from '../../../src/catalog/file-format';

describe('parseCatalogFile', () => {
  it('hashes plain tokens, fills defaults and keeps given fields', () => {
    const entries = parseCatalogFile(
      JSON.stringify([
        { sandboxID: 'sb1', host: '10.11.0.2', token: 'plain-1', state: 'running' },
        {
          sandboxID: 'sb2',
          host: 'sandbox-2.internal',
          tokenHash: hashAccessToken('plain-2'),
          state: 'paused',
          agentPort: 5000,
          autoResume: true,
        },
      ]),
    );
    expect(entries.get('sb1')).toEqual({
      sandboxID: 'sb1',
      host: '10.11.0.2',
      agentPort: 49983,
      tokenHash: hashAccessToken('plain-1'),
      state: 'running',
      autoResume: false,
    });
    expect(entries.get('sb2')).toEqual({
      sandboxID: 'sb2',
      host: 'sandbox-2.internal',
      agentPort: 5000,
      tokenHash: hashAccessToken('plain-2'),
      state: 'paused',
      autoResume: true,
    });
    expect(JSON.stringify([...entries.values()])).not.toContain('plain-1');
  });

  it('also accepts {"sandboxes": [...]}', () => {
    expect([...parseCatalogFile('{"sandboxes":[{"sandboxID":"a","host":"127.0.0.1","token":"t"}]}').keys()]).toEqual(['a']);
  });

  it('reports every bad entry with its index and field', () => {
    const text = JSON.stringify([
      { sandboxID: 'ok', host: '127.0.0.1', token: 't' },
      { sandboxID: 'bad id', host: '127.0.0.1', token: 't' },
      { sandboxID: 'b', host: 'not a host!', token: 't', state: 'sleeping' },
      { sandboxID: 'c', host: '127.0.0.1' },
      { sandboxID: 'd', host: '127.0.0.1', token: 't', agentPort: 70000, extra: 1 },
    ]);
    let message = '';
    try {
      parseCatalogFile(text, 'catalog.json');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^catalog\.json: /);
    expect(message).toContain('[1].sandboxID');
    expect(message).toContain('[2].host');
    expect(message).toContain('[2].state');
    expect(message).toContain('[3]: give exactly one of "token"');
    expect(message).toContain('[4].agentPort');
    expect(message).toContain('[4]: Unrecognized key: "extra"');
    expect(message).not.toContain('[0]');
  });

  it('refuses duplicate sandbox IDs', () => {
    const text = JSON.stringify([
      { sandboxID: 'a', host: '127.0.0.1', token: 't' },
      { sandboxID: 'a', host: '127.0.0.2', token: 'u' },
    ]);
    expect(() => parseCatalogFile(text)).toThrow('[1].sandboxID: "a" appears more than once');
  });

  it('refuses both token and tokenHash, bad hashes, non-JSON and other shapes', () => {
    expect(() => parseCatalogFile(JSON.stringify([{ sandboxID: 'a', host: 'h', token: 't', tokenHash: hashAccessToken('t') }]))).toThrow(
      'exactly one of',
    );
    expect(() => parseCatalogFile(JSON.stringify([{ sandboxID: 'a', host: 'h', tokenHash: 'ABC' }]))).toThrow('64 lowercase hex');
    expect(() => parseCatalogFile('[{')).toThrow('not valid JSON');
    expect(() => parseCatalogFile('{"a":1}')).toThrow('expected a JSON array');
  });

  it("keeps a sandbox's HTTPS ports and request host mask; refuses the agent's port as HTTPS and a mask that is not one Host", () => {
    const mask = ['localhost:$', '{PORT}'].join('');
    const entry = parseCatalogFile(
      JSON.stringify([{ sandboxID: 'a', host: 'h', token: 't', httpsPorts: [8443, 8443], maskRequestHost: mask }]),
    ).get('a');
    expect(entry).toMatchObject({ httpsPorts: [8443], maskRequestHost: mask });
    expect(() => parseCatalogFile(JSON.stringify([{ sandboxID: 'a', host: 'h', token: 't', httpsPorts: [49983] }]))).toThrow(
      "[0].httpsPorts: httpsPorts may not list the agent's port",
    );
    expect(() => parseCatalogFile(JSON.stringify([{ sandboxID: 'a', host: 'h', token: 't', maskRequestHost: 'a\r\nb: c' }]))).toThrow(
      '[0].maskRequestHost: expected a host name',
    );
  });
});
