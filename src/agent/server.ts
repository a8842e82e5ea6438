/**
 * The agent's HTTP server: `POST /filesystem.Filesystem/{Stat,ListDir}` (Connect unary, JSON) and
 * `GET /health` (204). Every failure is a Connect error body with its HTTP status; nothing a client sends can
 * end the process.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Accounts } from './accounts';
import { checkAccessToken, requestUser } from './auth';
import { checkProtocolHeaders, parseJsonBody, readBody, timeoutMs } from './connect-protocol';
import type { EntryContext } from './entry';
import { AgentError, errorBody } from './errors';
import { listDir, stat } from './handlers';
import { decodeRequest, listDirRequestSchema, statRequestSchema } from './messages';
import { parseAgentOptions, type AgentOptions, type AgentOptionsInput } from './options';
import { brandNames } from '../contract/brand';

export const SERVICE_PREFIX = '/filesystem.Filesystem/';
const PROCEDURES = ['Stat', 'ListDir'] as const;
type Procedure = (typeof PROCEDURES)[number];

export interface RunningAgent {
  host: string;
  port: number;
  options: AgentOptions;
  close(): Promise<void>;
}

/** Per-call state: the deadline and whether the client is still there. */
class Call {
  bodyRead = false;
  clientGone = false;
  constructor(readonly deadline: number | undefined) {}

  stopReason(): AgentError | undefined {
    if (this.clientGone) return new AgentError('canceled', 'the client closed the connection');
    if (this.deadline !== undefined && Date.now() >= this.deadline) return deadlineError();
    return undefined;
  }
}

function deadlineError(): AgentError {
  return new AgentError('deadline_exceeded', 'the call did not finish within its Connect-Timeout-Ms');
}

export async function startAgent(input: AgentOptionsInput = {}): Promise<RunningAgent> {
  const options = parseAgentOptions(input);
  const accounts = new Accounts();
  accounts.refresh();
  if (!accounts.user(options.defaultUser)) {
    throw new Error(`default user ${JSON.stringify(options.defaultUser)} does not exist in /etc/passwd (--default-user)`);
  }
  const ctx: EntryContext = { accounts, xattrPrefix: brandNames(options.brand).xattrPrefix };

  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res, options, accounts, ctx).catch((err: unknown) => {
      // Only a bug gets here: answer if we still can, and keep serving.
      const e = err instanceof AgentError ? err : new AgentError('internal', `internal error: ${(err as Error)?.message ?? String(err)}`);
      sendError(res, e, true);
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

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
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, options: AgentOptions, accounts: Accounts, ctx: EntryContext): Promise<void> {
  const url = req.url ?? '/';
  const pathname = url.split('?', 1)[0]!;

  if (pathname === '/health') {
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.writeHead(204).end();
      return;
    }
    return sendError(res, new AgentError('unimplemented', 'use GET /health', 405, { allow: 'GET, HEAD' }), true);
  }

  const procedure = pathname.startsWith(SERVICE_PREFIX) ? pathname.slice(SERVICE_PREFIX.length) : undefined;
  if (procedure === undefined || !PROCEDURES.includes(procedure as Procedure)) {
    const known = PROCEDURES.map((p) => `POST ${SERVICE_PREFIX}${p}`).join(', ');
    const code = procedure === undefined ? 'not_found' : 'unimplemented';
    return sendError(res, new AgentError(code, `no procedure at ${JSON.stringify(pathname)}; this agent serves ${known} and GET /health`, 404), true);
  }
  if (req.method !== 'POST') {
    return sendError(res, new AgentError('unimplemented', `${req.method} is not supported: Connect unary calls use POST`, 405, { allow: 'POST' }), true);
  }

  let call: Call | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    checkProtocolHeaders(req);
    checkAccessToken(req.headers, options.accessToken);
    const ms = timeoutMs(req);
    call = new Call(ms === undefined ? undefined : Date.now() + ms);
    const thisCall = call;
    res.on('close', () => {
      if (!res.writableFinished) thisCall.clientGone = true;
    });
    if (ms !== undefined) {
      timer = setTimeout(() => sendError(res, deadlineError(), !thisCall.bodyRead), ms);
    }
    const user = requestUser(req.headers, accounts, options.defaultUser);
    const body = parseJsonBody(await readBody(req, options.maxBodyBytes));
    call.bodyRead = true;

    if (procedure === 'Stat') {
      const request = decodeRequest(statRequestSchema, body, 'StatRequest');
      const json = stat(request, user, ctx);
      throwIfStopped(call);
      if (res.headersSent) return;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      res.end(json);
    } else {
      const request = decodeRequest(listDirRequestSchema, body, 'ListDirRequest');
      const chunks = await listDir(request, user, ctx, { maxEntries: options.maxEntries, stopReason: () => thisCall.stopReason() });
      throwIfStopped(call);
      if (res.headersSent) return;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': chunks.byteLength });
      clearTimeout(timer);
      await chunks.writeTo(res);
    }
  } catch (err) {
    if (!(err instanceof AgentError)) throw err;
    sendError(res, err, !(call?.bodyRead ?? false));
  } finally {
    clearTimeout(timer);
  }
}

function throwIfStopped(call: Call): void {
  const stop = call.stopReason();
  if (stop) throw stop;
}

/** Writes a Connect error unless a response already started. `closeAfter` when the request body was not read. */
function sendError(res: http.ServerResponse, err: AgentError, closeAfter: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const body = errorBody(err);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...err.headers,
  };
  if (closeAfter) headers.connection = 'close';
  res.writeHead(err.httpStatus, headers);
  res.end(body);
}
