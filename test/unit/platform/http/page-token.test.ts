import { ApiError } from '../../../../src/platform/http/types';
import { decodePageToken, encodePageToken, pageOf } from '../../../../src/platform/http/page-token';

const item = (id: string, at: string) => ({ id, at });
const items = [item('b', '2026-01-02'), item('a', '2026-01-01'), item('c', '2026-01-02'), item('d', '2026-01-03')];
const ids = (page: Array<{ id: string }>) => page.map((i) => i.id);

describe('page tokens', () => {
  it('walks a list oldest first, ties broken by ID, each item once, and ends without a token', () => {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const next = pageOf(items, (i) => i, { limit: 2, ...(token !== undefined ? { nextToken: token } : {}) });
      seen.push(...ids(next.page));
      token = next.nextToken;
    } while (token !== undefined);
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
  });

  it('walks newest first when asked, and an item added behind the position does not shift the next page', () => {
    const first = pageOf(items, (i) => i, { limit: 2, direction: -1 });
    expect(ids(first.page)).toEqual(['d', 'c']);
    const rest = pageOf([...items, item('e', '2026-01-04')], (i) => i, { limit: 5, direction: -1, nextToken: first.nextToken as string });
    expect(ids(rest.page)).toEqual(['b', 'a']);
    expect(rest.nextToken).toBeUndefined();
  });

  it('refuses a token it did not give out with a 400 naming the query field', () => {
    for (const bad of ['nonsense', encodePageToken({ at: 'x', id: 'y' }).slice(3), Buffer.from('[1,2]').toString('base64url')]) {
      expect(() => decodePageToken(bad)).toThrow(ApiError);
      expect(() => decodePageToken(bad)).toThrow(/query "nextToken"/);
    }
    expect(decodePageToken(encodePageToken({ at: 's', id: 'i' }))).toEqual({ at: 's', id: 'i' });
  });
});
