import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SERVER_KEEP_ALIVE_MS } from '../../contract/keep-alive';
import { RouteTable } from './route-table';
import { type AuditEntry, auditAction, auditTarget } from './audit-actions';
import { ApiError, type ApiRequest, type ApiResponse, type HttpMethod, type KeyVerdict, type Route } from './types';

/** Tells who a presented X-API-Key stands for (the team store, or a fixed set of the operator's keys). */
export interface ApiKeyCheck {
  check(presented: string): KeyVerdict | Promise<KeyVerdict>;
}

export interface ApiServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  routes: readonly Route[];
  apiKeys: ApiKeyCheck;
  /** Largest JSON request body; larger ones get 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Operational messages (never keys or tokens). */
  log?: (line: string) => void;
  /** Where every keyed change (not reads) is recorded once answered: who, what, when, from where, with what status. */
  audit?: (entry: AuditEntry) => Promise<void>;
}

export interface RunningApiServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const API_KEY_HEADER = 'x-api-key';
const METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Every error leaves as `{code, message}` with `code` = the HTTP status: E2B clients branch on the body's code. */
function send(res: ServerResponse, reply: ApiResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.stream !== undefined) {
    const { body } = reply.stream;
    headers['content-type'] = reply.stream.contentType;
    headers['content-length'] = String(reply.stream.length);
    res.writeHead(reply.status, headers);
    body.on('error', () => res.destroy());
    res.on('close', () => body.destroy());
    body.pipe(res);
    return;
  }
  if (reply.text !== undefined) {
    const payload = typeof reply.text.body === 'string' ? Buffer.from(reply.text.body, 'utf8') : reply.text.body;
    headers['content-type'] = reply.text.contentType;
    headers['content-length'] = String(payload.length);
    res.writeHead(reply.status, headers).end(payload);
    return;
  }
  if (reply.body === undefined) {
    if (reply.status !== 204 && reply.status !== 304) headers['content-length'] = '0';
    res.writeHead(reply.status, headers).end();
    return;
  }
  const payload = Buffer.from(JSON.stringify(reply.body), 'utf8');
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(payload.length);
  if (reply.reason !== undefined) res.writeHead(reply.status, reasonPhrase(reply.reason), headers).end(payload);
  else res.writeHead(reply.status, headers).end(payload);
}

/** A reason phrase HTTP/1.1 carries (RFC 9112: tabs, spaces, visible ASCII here), at most 512 characters. */
export function reasonPhrase(text: string): string {
  return text
    .replace(/×/g, 'x')
    .replace(/[^\t\x20-\x7e]/g, '?')
    .slice(0, 512);
}

/** `Authorization: Bearer <key>`: how Prometheus (and other scrapers) present a key. */
function bearerOf(authorization: string | undefined): string | undefined {
  const match = /^Bearer (\S+)$/i.exec(authorization ?? '');
  return match?.[1];
}

function errorReply(code: number, message: string, headers?: Record<string, string>): ApiResponse {
  return { status: code, body: { code, message }, headers };
}

class BodyTooLarge extends Error {}

/** Reads the whole body (Content-Length or chunked), refusing more than `limit` bytes. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onAborted = () => onError(new Error('the client went away before sending its whole body'));
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new ApiError(400, `the request body is not valid JSON (${(err as Error).message}); send a JSON object`);
  }
}

/**
 * The platform API's HTTP server: routes by method and path, checks X-API-Key, reads JSON bodies (Content-Length
 * or chunked, bounded), and turns every outcome into a status with a JSON body, or an empty body with
 * Content-Length: 0, which is what E2B clients parse.
 */
export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const table = new RouteTable(options.routes);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log ?? (() => {});

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<ApiResponse> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://api.invalid');
    } catch {
      return errorReply(400, `the request target ${JSON.stringify(req.url)} is not a valid path`);
    }
    const method = req.method ?? 'GET';
    const found = table.match(method, url.pathname);
    if (found.kind === 'bad-path') return errorReply(400, found.message);
    if (found.kind === 'not-found') return errorReply(404, `no such endpoint: ${method} ${url.pathname}`);
    if (found.kind === 'method-not-allowed' || !METHODS.includes(method)) {
      const allowed = found.kind === 'method-not-allowed' ? found.allowed : [];
      return errorReply(405, `${method} is not allowed on ${url.pathname}; allowed: ${allowed.join(', ')}`, { allow: allowed.join(', ') });
    }
    const { route, params } = found;
    let caller: ApiRequest['caller'];
    if (route.auth !== 'none') {
      const presented = req.headers[API_KEY_HEADER] ?? bearerOf(req.headers.authorization);
      if (presented === undefined || presented === '') return errorReply(401, 'the X-API-Key header is missing; send the platform API key');
      if (typeof presented !== 'string') return errorReply(401, 'send one X-API-Key header');
      const verdict = await options.apiKeys.check(presented);
      if (!verdict.ok) return errorReply(verdict.status, verdict.message, verdict.headers);
      if (route.auth === 'admin' && verdict.caller.role !== 'admin')
        return errorReply(
          403,
          "this is the administration of the platform: it needs an admin key (the key file's, or one made with --admin)",
        );
      caller = verdict.caller;
    }
    let body: unknown;
    if (!route.rawBody) {
      let raw: Buffer;
      try {
        raw = await readBody(req, limit);
      } catch (err) {
        if (err instanceof BodyTooLarge) {
          res.shouldKeepAlive = false;
          return errorReply(413, `the request body is larger than ${limit} bytes`, { connection: 'close' });
        }
        throw err;
      }
      body = parseJson(raw);
    }
    const request: ApiRequest = {
      method: method as HttpMethod,
      params,
      query: url.searchParams,
      body,
      raw: req,
      ...(caller ? { caller } : {}),
    };
    const action = caller && options.audit ? auditAction(method, route.path) : undefined;
    if (action === undefined || !caller) return route.handler(request);
    const audit = (reply: ApiResponse) => {
      if (reply.forwarded) return;
      const entry: AuditEntry = {
        at: new Date().toISOString(),
        teamID: caller.teamID,
        keyID: caller.keyID,
        action,
        target: auditTarget(params, reply.body),
        from: req.socket.remoteAddress ?? '',
        status: reply.status,
      };
      (options.audit as (e: AuditEntry) => Promise<void>)(entry).catch((err: Error) => log(`audit: ${err.message}`));
    };
    try {
      const reply = await route.handler(request);
      audit(reply);
      return reply;
    } catch (err) {
      audit({ status: err instanceof ApiError ? err.code : 500 });
      throw err;
    }
  }

  const server = createServer((req, res) => {
    handle(req, res)
      .then((reply) => send(res, reply))
      .catch((err: unknown) => {
        if (err instanceof ApiError) {
          send(res, errorReply(err.code, err.message));
          return;
        }
        // A client that went away mid-body has nobody to answer.
        if (res.destroyed || req.socket.destroyed) return;
        log(`${req.method} ${req.url}: ${(err as Error).stack ?? String(err)}`);
        send(res, errorReply(500, `internal error: ${(err as Error).message}`));
      });
  });
  server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
