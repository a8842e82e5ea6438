/** Filtering and paging of `GET /v2/sandboxes`: a pure function of the records and the query. */
import { comparePositions, decodePageToken, encodePageToken, type PagePosition, pageOf } from '../http/page-token';
import type { ListQuery } from './requests';
import type { SandboxRecord } from './record';

/** A listed sandbox's place in the order (its page token: http/page-token.ts). */
interface Cursor {
  startedAt: string;
  sandboxID: string;
}

const positionOf = (c: Cursor): PagePosition => ({ at: c.startedAt, id: c.sandboxID });

export function encodeCursor(c: Cursor): string {
  return encodePageToken(positionOf(c));
}

export function decodeCursor(token: string): Cursor {
  const { at, id } = decodePageToken(token);
  return { startedAt: at, sandboxID: id };
}

/** The list's order: start time, then ID (ascending); a fleet merges its hosts' pages by the same rule. */
export function compareListed(a: Cursor, b: Cursor): number {
  return comparePositions(positionOf(a), positionOf(b));
}

/** What a list may be narrowed by (the v2 query's filters; the 1.x list sends only metadata). */
export type ListFilter = Pick<ListQuery, 'state' | 'template' | 'metadata' | 'startedAfter'>;

/** Every listed sandbox that passes the filter, oldest first; sandboxes still being created are never listed. */
export function listAllSandboxes(records: readonly SandboxRecord[], filter: ListFilter): SandboxRecord[] {
  const startedAfter = filter.startedAfter === undefined ? undefined : new Date(filter.startedAfter).getTime();
  return records
    .filter((r) => r.state !== 'creating')
    .filter((r) => filter.state === undefined || filter.state.length === 0 || filter.state.includes(r.state as 'running' | 'paused'))
    .filter((r) => filter.template === undefined || r.templateID === filter.template || r.alias === filter.template)
    .filter((r) => Object.entries(filter.metadata ?? {}).every(([k, v]) => r.metadata[k] === v))
    .filter((r) => startedAfter === undefined || new Date(r.startedAt).getTime() > startedAfter)
    .sort(compareListed);
}

/** One page, in start order (newest first by default), and the token of the next page when there is one. */
export function listSandboxes(records: readonly SandboxRecord[], query: ListQuery): { page: SandboxRecord[]; nextToken?: string } {
  return pageOf(listAllSandboxes(records, query), positionOf, {
    limit: query.limit,
    direction: query.order === 'asc' ? 1 : -1,
    ...(query.nextToken !== undefined ? { nextToken: query.nextToken } : {}),
  });
}
