/** Filtering and paging of `GET /v2/sandboxes`: a pure function of the records and the query. */
import { ApiError } from '../http/types';
import type { ListQuery } from './requests';
import type { SandboxRecord } from './record';

interface Cursor {
  startedAt: string;
  sandboxID: string;
}

export function encodeCursor(record: Cursor): string {
  return Buffer.from(JSON.stringify([record.startedAt, record.sandboxID]), 'utf8').toString('base64url');
}

export function decodeCursor(token: string): Cursor {
  try {
    const [startedAt, sandboxID] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof startedAt === 'string' && typeof sandboxID === 'string') return { startedAt, sandboxID };
  } catch {
    // reported below
  }
  throw new ApiError(
    400,
    `query "nextToken": ${JSON.stringify(token.slice(0, 60))} is not a token this API gave out; pass the x-next-token header of the previous page`,
  );
}

/** The list's order: start time, then ID (ascending); a fleet merges its hosts' pages by the same rule. */
export function compareListed(a: Cursor, b: Cursor): number {
  if (a.startedAt !== b.startedAt) return a.startedAt < b.startedAt ? -1 : 1;
  return a.sandboxID < b.sandboxID ? -1 : a.sandboxID > b.sandboxID ? 1 : 0;
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
  const direction = query.order === 'asc' ? 1 : -1;
  const after = query.nextToken === undefined ? undefined : decodeCursor(query.nextToken);
  const matching = listAllSandboxes(records, query)
    .sort((a, b) => direction * compareListed(a, b))
    .filter((r) => after === undefined || direction * compareListed(r, after) > 0);
  const page = matching.slice(0, query.limit);
  const last = page.at(-1);
  return matching.length > page.length && last ? { page, nextToken: encodeCursor(last) } : { page };
}
