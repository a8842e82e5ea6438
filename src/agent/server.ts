/**
 * The agent's HTTP server, one listener for everything:
 * - `GET /health` (204), `POST /init`, `GET /envs`, and `GET|POST /files` (files.ts);
 * - `POST /filesystem.Filesystem/{Stat,ListDir}`: the fast path (filesystem/fast-path.ts), bounded-memory JSON writers;
 * - `POST /process.Process/{Start,Connect}` in JSON streaming form: process/stream-path.ts (native base64);
 * - every other procedure of the filesystem and process services through @connectrpc/connect's node adapter.
 * Every failure is a Connect error body with its HTTP status; nothing a client sends can end the process.
 *
 * The agent starts in every sandbox and a create waits for its /health: what only some calls need (the Connect
 * router with the process service and its descriptors, the process streams, /files with its multipart parser) is
 * loaded on the first call that needs it (`lazy` below), not before the agent listens.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Code } from '../contract/connect-codes';
import { brandNames } from '../contract/brand';
import { CONNECT_TIMEOUT_HEADER, parseConnectTimeoutMs, timerDelay } from '../contract/connect-timeout';
import { SERVER_KEEP_ALIVE_MS } from '../contract/keep-alive';
import { Accounts } from './accounts';
import { BufferPool, POOL_BUFFER_BYTES } from './buffer-pool';
import { checkAccessToken } from './auth';
import type { AgentServices } from './call-context';
import { checkJsonForm, MAX_MESSAGE_BYTES, parseJsonBody, readBody } from './connect-protocol';
import { AgentError } from './errors';
import { FAST_PROCEDURES, fastPath, ResponseBudget } from './filesystem/fast-path';
import { WatcherRegistry } from './filesystem/watchers';
import { applyInit } from './init';
import { parseAgentOptions, type AgentOptions, type AgentOptionsInput } from './options';
import { ProcessRegistry } from './process/registry';
import { PROCEDURES, type RouterDispatch } from './procedures';
import { sendError } from './send-error';
import { AgentState } from './state';
import { childOomScoreAdj } from './oom';

export const SERVICE_PREFIX = '/filesystem.Filesystem/';
const PROCESS_PREFIX = '/process.Process/';
const INIT_MAX_BODY = 1024 * 1024;

/** A module loaded on the first call that needs it, once. */
function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

/** What only some calls need, loaded when the first of them comes. */
interface LazyParts {
  router(): Promise<RouterDispatch>;
  streams(): Promise<typeof import('./process/stream-path')>;
  files(): Promise<typeof import('./files/handler')>;
}

export interface RunningAgent {
  host: string;
  port: number;
  options: AgentOptions;
  close(): Promise<void>;
}

export async function startAgent(input: AgentOptionsInput = {}): Promise<RunningAgent> {
  const options = parseAgentOptions(input);
  const accounts = new Accounts();
  accounts.refresh();
  if (!accounts.user(options.defaultUser)) {
    throw new Error(`default user ${JSON.stringify(options.defaultUser)} does not exist in /etc/passwd (--default-user)`);
  }
  const svc: AgentServices = {
    options,
    state: new AgentState(options),
    accounts,
    entries: { accounts, xattrPrefix: brandNames(options.brand).xattrPrefix },
    processes: new ProcessRegistry(),
    watchers: new WatcherRegistry(),
    // As many free buffers as the ListDir budget holds: a burst of listings gives them back for the next one.
    buffers: new BufferPool(Math.floor(options.maxResponseBytes / POOL_BUFFER_BYTES)),
    agentUid: process.getuid?.() ?? 0,
    childOomScoreAdj: childOomScoreAdj(),
  };
  const budget = new ResponseBudget(options.maxResponseBytes);
  const lazy: LazyParts = {
    router: onFirstUse(async () => (await import('./router')).agentRouter(svc)),
    streams: onFirstUse(() => import('./process/stream-path')),
    files: onFirstUse(() => import('./files/handler')),
  };

  const server = http.createServer(
    {
      keepAliveTimeout: SERVER_KEEP_ALIVE_MS,
      headersTimeout: options.headTimeoutMs,
      requestTimeout: 0,
      // node checks every connection's head on this interval, whether or not any is open: each check wakes the agent,
      // so a host's idle agents would each wake every second. A quarter of the timeout: a slow head is answered 408
      // within 1.25 times the timeout, and an idle agent wakes every 5 s by default.
      connectionsCheckingInterval: Math.ceil(options.headTimeoutMs / 4),
    },
    (req, res) => {
      handle(req, res, svc, budget, lazy).catch((err: unknown) => {
        // Only a bug gets here: answer if we still can, and keep serving.
        const e =
          err instanceof AgentError ? err : new AgentError(Code.Internal, `internal error: ${(err as Error)?.message ?? String(err)}`);
        sendError(req, res, e);
      });
    },
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerParserError(err, socket, options.headTimeoutMs));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    host: options.host,
    port: address.port,
    options,
    close: () =>
      new Promise<void>((resolve, reject) => {
        svc.processes.killAll();
        svc.watchers.closeAll();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  svc: AgentServices,
  budget: ResponseBudget,
  lazy: LazyParts,
): Promise<void> {
  const url = req.url ?? '/';
  const pathname = url.split('?', 1)[0]!;

  if (pathname === '/health') {
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.writeHead(204).end();
      return;
    }
    return sendError(req, res, new AgentError(Code.Unimplemented, 'use GET /health', 405, { allow: 'GET, HEAD' }));
  }
  if (pathname === '/init') {
    if (req.method !== 'POST') return sendError(req, res, new AgentError(Code.Unimplemented, 'use POST /init', 405, { allow: 'POST' }));
    try {
      checkAccessToken(req.headers, svc.state.accessToken);
      applyInit(svc.state, svc.accounts, parseJsonBody(await readBody(req, INIT_MAX_BODY)));
    } catch (err) {
      if (!(err instanceof AgentError)) throw err;
      return sendError(req, res, err);
    }
    res.writeHead(204).end();
    return;
  }
  if (pathname === '/envs') {
    if (req.method !== 'GET') return sendError(req, res, new AgentError(Code.Unimplemented, 'use GET /envs', 405, { allow: 'GET' }));
    try {
      checkAccessToken(req.headers, svc.state.accessToken);
    } catch (err) {
      return sendError(req, res, err as AgentError);
    }
    const body = JSON.stringify(svc.state.envVars);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    return;
  }
  if (pathname === '/files') return (await lazy.files()).handleFiles(req, res, svc);

  // Every procedure below needs the token, a valid deadline and a JSON form; all three are checked once, here.
  const timeout = parseConnectTimeoutMs(req.headers[CONNECT_TIMEOUT_HEADER]);
  const kind = PROCEDURES.get(pathname);
  try {
    checkAccessToken(req.headers, svc.state.accessToken);
    if (!timeout.ok) throw new AgentError(Code.InvalidArgument, timeout.message);
    if (kind === undefined) throw new AgentError(Code.Unimplemented, `${pathname} is not a procedure of this agent`, 404);
    if (req.method !== 'POST') {
      throw new AgentError(Code.Unimplemented, `${req.method} is not supported: Connect calls use POST`, 405, { allow: 'POST' });
    }
    checkJsonForm(req, kind);
  } catch (err) {
    return sendError(req, res, err as AgentError);
  }
  const ms = timeout.ok ? timeout.ms : undefined;
  keepDeadline(req, res, ms);

  if (pathname.startsWith(SERVICE_PREFIX) && FAST_PROCEDURES.has(pathname.slice(SERVICE_PREFIX.length))) {
    return fastPath(req, res, pathname.slice(SERVICE_PREFIX.length), ms, svc, budget);
  }
  const streams = pathname.startsWith(PROCESS_PREFIX) ? await lazy.streams() : undefined;
  if (streams?.isJsonStream(req, pathname)) {
    try {
      await streams.serveJsonStream(req, res, pathname, ms, svc);
    } catch (err) {
      if (!(err instanceof AgentError)) throw err;
      sendError(req, res, err);
    }
    return;
  }
  // The router gets the deadline parsed by the contract's rule, not the header (its own parser differs).
  delete req.headers[CONNECT_TIMEOUT_HEADER];
  // A unary call's body is read here, within the budget every body being received shares; the router parses it.
  let body: Uint8Array | undefined;
  if (kind === 'unary') {
    try {
      body = await readBody(req, MAX_MESSAGE_BYTES);
    } catch (err) {
      if (!(err instanceof AgentError)) throw err;
      return sendError(req, res, err);
    }
    if (res.headersSent) return; // the deadline passed while the body arrived, and was answered
  }
  (await lazy.router())(req, res, ms, body);
}

/**
 * A call whose answer has not begun when its Connect-Timeout-Ms passes is answered deadline_exceeded then, whatever
 * it is still waiting for (a request body that never completes, a slow walk). An answer that has begun (a stream)
 * ends by its handler's own deadline.
 */
function keepDeadline(req: http.IncomingMessage, res: http.ServerResponse, ms: number | undefined): void {
  const delay = ms === undefined ? undefined : timerDelay(ms);
  if (delay === undefined) return;
  const timer = setTimeout(
    () => sendError(req, res, new AgentError(Code.DeadlineExceeded, `the call did not finish within its Connect-Timeout-Ms (${ms} ms)`)),
    delay,
  );
  // Once the answer has begun, sendError leaves it alone: the handler keeps the deadline from then on.
  res.once('close', () => clearTimeout(timer));
}

/**
 * Parser errors (malformed request line or headers, a head that is too large or too slow) get their own status
 * and a Connect JSON body, then the connection closes: nothing after a malformed head can be trusted.
 */
function answerParserError(err: NodeJS.ErrnoException, socket: Socket, headTimeoutMs: number): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  let status = 400;
  let code = 'invalid_argument';
  let message = `malformed HTTP request: ${err.message}`;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    code = 'resource_exhausted';
    message = 'request head is larger than 16 KiB';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    status = 408;
    code = 'deadline_exceeded';
    message = `request head not received within ${headTimeoutMs} ms`;
  }
  const body = JSON.stringify({ code, message });
  const reason = http.STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
