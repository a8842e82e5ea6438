/**
 * The page tokens of the API's lists (`nextToken` in, `x-next-token` out): the position of a page's last item, as its
 * ordering time and its ID (ties broken by ID). Opaque to clients; one form and one order for every list.
 */
import { ApiError } from './types';

export interface PagePosition {
  /** ISO-8601 UTC: when the item was started or made. */
  at: string;
  id: string;
}

export function encodePageToken(p: PagePosition): string {
  return Buffer.from(JSON.stringify([p.at, p.id]), 'utf8').toString('base64url');
}

/** The position a token names; a 400 for a token this API did not give out. */
export function decodePageToken(token: string): PagePosition {
  try {
    const [at, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && typeof id === 'string') return { at, id };
  } catch {
    // reported below
  }
  throw new ApiError(
    400,
    `query "nextToken": ${JSON.stringify(token.slice(0, 60))} is not a token this API gave out; pass the x-next-token header of the previous page`,
  );
}

/** Ascending: time, then ID. */
export function comparePositions(a: PagePosition, b: PagePosition): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * One page of `items` in `direction` (1 oldest first, -1 newest first) after the position `nextToken` names, and the
 * token of the next page when there is one.
 */
export function pageOf<T>(
  items: readonly T[],
  positionOf: (item: T) => PagePosition,
  query: { limit: number; nextToken?: string; direction?: 1 | -1 },
): { page: T[]; nextToken?: string } {
  const direction = query.direction ?? 1;
  const after = query.nextToken === undefined ? undefined : decodePageToken(query.nextToken);
  const matching = [...items]
    .sort((a, b) => direction * comparePositions(positionOf(a), positionOf(b)))
    .filter((item) => after === undefined || direction * comparePositions(positionOf(item), after) > 0);
  const page = matching.slice(0, query.limit);
  const last = page.at(-1);
  return matching.length > page.length && last !== undefined ? { page, nextToken: encodePageToken(positionOf(last)) } : { page };
}
