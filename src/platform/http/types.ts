/**
 * The seam between the platform's HTTP server and its rooms: the sandbox API and the template builder each hand the
 * server a table of routes, and a handler answers or throws an ApiError. The server (server.ts) does auth, JSON,
 * errors and framing.
 */
import type { IncomingMessage } from 'node:http';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface ApiRequest {
  method: HttpMethod;
  /** Path parameters named in the route, e.g. { sandboxID } for /sandboxes/:sandboxID. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (undefined for none); not read at all for `rawBody` routes. */
  body: unknown;
  /** The request itself, for `rawBody` routes (uploads) to stream from. */
  raw: IncomingMessage;
}

export interface ApiResponse {
  status: number;
  /** Serialised as JSON; undefined gives an empty body with Content-Length: 0. */
  body?: unknown;
  headers?: Record<string, string>;
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
  /** 'api-key': X-API-Key must match a stored key. 'none': e.g. an upload URL that carries its own signature. */
  auth: 'api-key' | 'none';
  /** Do not read the body: the handler streams `raw`. */
  rawBody?: boolean;
  handler(req: ApiRequest): Promise<ApiResponse>;
}
