/** Which rule set a host gets, and a request head rewritten by it (network.rules). */
import { headersOf, placeholderNames, rewriteHead, rulesFor } from '../../../src/runtime/network/transform-rules';

const set = (h: Record<string, string>) => [{ transform: { headers: h } }];
const rules = {
  'api.example.com': set({ 'X-Which': 'exact' }),
  '*.example.com': set({ 'X-Which': 'short' }),
  '*.deep.example.com': set({ 'X-Which': 'long' }),
};

test('exact first, then the longest wildcard; a wildcard never matches its apex; no set is merged', () => {
  const which = (host: string) => rulesFor(rules, host)?.[0]?.transform?.headers?.['X-Which'];
  expect(which('API.example.com.')).toBe('exact');
  expect(which('a.example.com')).toBe('short');
  expect(which('x.y.deep.example.com')).toBe('long');
  expect(which('deep.example.com')).toBe('short');
  expect(which('example.com')).toBeUndefined();
  expect(which('notexample.com')).toBeUndefined();
  expect(which('')).toBeUndefined();
});

test('a head gets the set’s headers (replacing its own of the same name, a later rule over an earlier one), placeholders resolved', () => {
  const ph = (n: string) => ['$', `{e2b.secrets.${n}}`].join('');
  const h = headersOf([
    { transform: { headers: { Authorization: 'first', 'X-Two': `${ph('a')}-${ph('b')}` } } },
    { transform: { headers: { authorization: `Bearer ${ph('a')}` } } },
  ]);
  expect(placeholderNames(`${ph('a')}-${ph('b')}-${ph('a')}`)).toEqual(['a', 'b']);
  const head = 'GET / HTTP/1.1\r\nHost: api.example.com\r\nAUTHORIZATION: mine\r\nX-Keep: 1';
  const out = rewriteHead(
    head,
    h,
    new Map([
      ['a', 'AAA'],
      ['b', 'BBB'],
    ]),
  );
  expect(out).toBe('GET / HTTP/1.1\r\nHost: api.example.com\r\nX-Keep: 1\r\nauthorization: Bearer AAA\r\nX-Two: AAA-BBB');
  expect(() => rewriteHead(head, h, new Map([['a', 'AAA']]))).toThrow(/secret "b" of header X-Two is not known/);
  expect(() =>
    rewriteHead(
      head,
      h,
      new Map([
        ['a', 'A\r\nX: 1'],
        ['b', 'B'],
      ]),
    ),
  ).toThrow(/control character/);
});
