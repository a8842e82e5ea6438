/**
 * A minimal server for a Route[] table, standing in for the platform's server in these tests until it is merged:
 * X-API-Key auth, JSON bodies, `{code, message}` errors, Content-Length on every answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, type HttpMethod, type Route } from '../../../../src/platform/types';

export interface HarnessServer {
  url: string;
  close(): Promise<void>;
}

function match(route: Route, method: string, path: string): Record<string, string> | undefined {
  if (route.method !== method) return undefined;
  const want = route.path.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return undefined;
  }
  return params;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'the body is not JSON');
  }
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startHarnessServer(routes: Route[], apiKey: string): Promise<HarnessServer> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      try {
        let found: { route: Route; params: Record<string, string> } | undefined;
        for (const route of routes) {
          const params = match(route, req.method ?? '', url.pathname);
          if (params) {
            found = { route, params };
            break;
          }
        }
        if (!found) throw new ApiError(404, `no route ${req.method} ${url.pathname}`);
        if (found.route.auth === 'api-key' && req.headers['x-api-key'] !== apiKey) throw new ApiError(401, 'invalid API key');
        const body = found.route.rawBody ? undefined : await readJson(req);
        const answer = await found.route.handler({ method: req.method as HttpMethod, params: found.params, query: url.searchParams, body, raw: req });
        for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
        send(res, answer.status, answer.body);
      } catch (err) {
        if (err instanceof ApiError) send(res, err.code, { code: err.code, message: err.message });
        else send(res, 500, { code: 500, message: (err as Error).message });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
