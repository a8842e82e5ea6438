/**
 * The code-interpreter server's HTTP routes, as `@e2b/code-interpreter` calls them through the gateway:
 * `POST /execute` streams NDJSON while the code runs; `/contexts` creates, lists, removes and restarts contexts;
 * `GET /health` answers once the server listens. A client that goes away during a run (its `timeoutMs` ran out)
 * interrupts the kernel. Errors are plain text: the SDK shows a 404's body as the NotFoundError's message.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Contexts } from './contexts';
import { DEFAULT_LANGUAGE, END_LINE, eventLine, parseContextRequest, parseExecuteRequest, type Parsed } from './wire';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`the body is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function refuse(res: ServerResponse, parsed: Parsed<unknown> & { ok: false }): void {
  sendText(res, parsed.status, parsed.message);
}

async function execute(contexts: Contexts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed = parseExecuteRequest(await readBody(req));
  if (!parsed.ok) return refuse(res, parsed);
  const { code, contextId, language, envs } = parsed.value;
  let id = contextId;
  if (id === undefined) {
    try {
      id = (await contexts.defaultContext(language ?? DEFAULT_LANGUAGE)).id;
    } catch (err) {
      return sendText(res, 500, `the ${language ?? DEFAULT_LANGUAGE} kernel could not start: ${(err as Error).message}`);
    }
  } else if (contexts.get(id) === undefined) return sendText(res, 404, `context ${id} not found`);
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' });
  res.flushHeaders();
  // After the client left, what the interrupted run still reports has nowhere to go.
  const send = (line: string) => !res.destroyed && res.write(`${line}\n`);
  const outcome = await contexts.run(id, code, envs, (event) => send(eventLine(event)), gone.signal);
  if (outcome === 'cancelled') process.stderr.write(`code-interpreter: a run in ${id} was dropped: its client went away\n`);
  if (!res.destroyed) res.end(`${END_LINE}\n`);
}

async function route(contexts: Contexts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sandbox');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  if (path === '/health' && method === 'GET') return sendText(res, 200, 'OK');
  if (path === '/execute' && method === 'POST') return execute(contexts, req, res);
  if (path === '/contexts' && method === 'GET') return sendJson(res, 200, contexts.list());
  if (path === '/contexts' && method === 'POST') {
    const parsed = parseContextRequest(await readBody(req));
    if (!parsed.ok) return refuse(res, parsed);
    try {
      return sendJson(res, 200, await contexts.create(parsed.value.language, parsed.value.cwd));
    } catch (err) {
      return sendText(res, 500, `the ${parsed.value.language} kernel could not start: ${(err as Error).message}`);
    }
  }
  const one = /^\/contexts\/([^/]+)(\/restart)?$/.exec(path);
  if (one !== null && ((method === 'DELETE' && !one[2]) || (method === 'POST' && one[2]))) {
    const id = decodeURIComponent(one[1]);
    const found = one[2] ? await contexts.restart(id) : await contexts.remove(id);
    if (!found) return sendText(res, 404, `context ${id} not found`);
    res.writeHead(204).end();
    return;
  }
  sendText(res, 404, `no route ${method} ${path}: the code interpreter serves /execute, /contexts and /health`);
}

export function codeInterpreterServer(contexts: Contexts): Server {
  return createServer((req, res) => {
    route(contexts, req, res).catch((err: Error) => {
      process.stderr.write(`code-interpreter: ${req.method} ${req.url}: ${err.stack ?? err.message}\n`);
      if (!res.headersSent) sendText(res, 500, err.message);
      else res.end();
    });
  });
}
