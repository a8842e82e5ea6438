/**
 * The seams inside the platform API: routes are tables of handlers (sandboxes and templates each contribute theirs),
 * and sandboxes find templates through a resolver. The HTTP server (server.ts) does auth, JSON, errors and framing.
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

/** What a sandbox needs from its template. */
export interface TemplateForSandbox {
  templateID: string;
  /** The name the template was created with (E2B calls it alias), if any. */
  alias?: string;
  buildID: string;
  /** Read-only root filesystem layers, topmost first. */
  layers: string[];
  memoryMB: number;
  cpuCount: number;
  /** Run by the agent after /init, in the background; absent for templates without one. */
  startCmd?: string;
  /** The sandbox is ready when this exits 0 (polled), within readyTimeoutMs. */
  readyCmd?: string;
  /** ENV, USER and WORKDIR as the last step left them. */
  envs: Record<string, string>;
  user: string;
  workdir?: string;
}

export interface TemplateResolver {
  /** By template ID or alias; undefined when there is no ready template of that name. */
  resolve(idOrAlias: string): Promise<TemplateForSandbox | undefined>;
  /** The IDs and aliases of every ready template (a fleet host advertises them, so creates go where they can run). */
  names(): Promise<string[]>;
}
