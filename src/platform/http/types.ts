/**
 * The seam between the platform's HTTP server and its rooms: the sandbox API and the template builder each hand the
 * server a table of routes, and a handler answers or throws an ApiError. The server (server.ts) does auth, JSON,
 * errors and framing.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * `member`: acts on its own team's resources. `admin`: the operator's key (the key file's keys are admins of the
 * default team): runs the administration (teams, keys, audit) and acts on every team's resources, which is what the
 * gateway's auto-resume and the operator's own tools need.
 */
export type KeyRole = 'member' | 'admin';

/** The per-request bounds of the caller's team (the teams' quotas; null or absent: no limit). */
export interface CallerQuotas {
  maxTimeoutSeconds?: number | null;
  requestsPerSecond?: number | null;
}

/** Who a request comes from: filled in by the API server from the presented key, for every keyed route. */
export interface Caller {
  teamID: string;
  keyID: string;
  role: KeyRole;
  /** The team's quotas as they were when the key was checked (the per-request bounds are read from here). */
  quotas: CallerQuotas;
  /** The key as presented: `GET /teams` hands it back (it is the caller's own), nothing else does. */
  presentedKey: string;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  method: HttpMethod;
  /** Path parameters named in the route, e.g. { sandboxID } for /sandboxes/:sandboxID. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (undefined for none); not read at all for `rawBody` routes. */
  body: unknown;
  /** The request itself, for `rawBody` routes (uploads) to stream from. */
  raw: IncomingMessage;
  /** Who sent it (team, key), for every keyed route; undefined on routes without a key. */
  caller?: Caller;
}

/** What a presented X-API-Key stands for: a caller, or the refusal to answer with. */
export type KeyVerdict = { ok: true; caller: Caller } | { ok: false; status: number; message: string; headers?: Record<string, string> };

export interface ApiResponse {
  status: number;
  /** Serialised as JSON; undefined gives an empty body with Content-Length: 0. */
  body?: unknown;
  /** A body that is not JSON (a Prometheus exposition, a page), sent as is. */
  text?: { contentType: string; body: string | Buffer };
  /** A body streamed as it is read (a file), of a known length. */
  stream?: { contentType: string; body: Readable; length: number };
  headers?: Record<string, string>;
  /** The status line's reason phrase instead of the standard one (printable ASCII; others become '?'). */
  reason?: string;
  /** Answered by another host of a fleet (which audits it there): not audited again here. */
  forwarded?: boolean;
}

/** A problem to answer with `{code, message}` and the status `code`. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Route {
  method: HttpMethod;
  /** Literal segments and `:name` parameters, e.g. '/templates/:templateID/builds/:buildID/status'. */
  path: string;
  /**
   * 'api-key': X-API-Key must be a valid key (any team's). 'admin': an admin key (the administration of teams, keys
   * and the audit trail). 'none': e.g. an upload URL that carries its own signature.
   */
  auth: 'api-key' | 'admin' | 'none';
  /** Do not read the body: the handler streams `raw`. */
  rawBody?: boolean;
  handler(req: ApiRequest): Promise<ApiResponse>;
}
