import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { MCP_GATEWAY_PORT, MCP_PATH } from '../../contract/mcp';
import type { Catalog } from '../catalog/schema';
import type { ValidMcpConfig } from '../config/validate';
import { type LaunchPlan, planLaunches, type UnplannedServer } from '../launch/plan';
import { DEFAULT_IMAGES_DIRS, imageResolver } from '../launch/image-dir';
import { binResolver } from '../launch/resolve-bin';
import { createFacade } from './facade';
import { Upstream, type UpstreamStatus } from './upstream';

export interface GatewayOptions {
  config: ValidMcpConfig;
  catalog: Catalog;
  token: string;
  port?: number;
  host?: string;
  /** Directories holding node_modules with the catalog's npm servers, searched in order. */
  serversDirs: string[];
  /** Directories holding the catalog's OCI images (`<dir>/<key>/rootfs`), searched in order (default DEFAULT_IMAGES_DIRS). */
  imagesDirs?: string[];
  /** A private directory for per-server working dirs and config files. */
  stateDir: string;
  /** The node binary that runs npm servers (default: this process's). */
  node?: string;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
  maxRestarts?: number;
  restartWindowMs?: number;
  /** Sessions idle longer than this are closed. */
  sessionIdleMs?: number;
  log?(line: string): void;
}

export interface GatewayStatus {
  ready: boolean;
  servers: UpstreamStatus[];
}

export interface RunningGateway {
  port: number;
  host: string;
  /** Resolves once every server is ready or has failed. */
  settled: Promise<GatewayStatus>;
  status(): GatewayStatus;
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(Object.assign(new Error(`request body over ${MAX_BODY} bytes`), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

function jsonRpcError(
  res: http.ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * The in-sandbox MCP gateway: launches the configured servers over stdio and serves all their tools, named
 * `<server>__<tool>`, over Streamable HTTP at /mcp behind `Authorization: Bearer <token>`. GET /health answers
 * without a token; GET /status (with the token) reports every server's state, error and stderr.
 */
export async function startMcpGateway(options: GatewayOptions): Promise<RunningGateway> {
  const log = options.log ?? ((line: string) => process.stderr.write(`mcp-gateway: ${line}\n`));
  const tokenDigest = digest(options.token);
  const upstreams = new Map<string, Upstream>();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server; seen: number }>();
  const failedPlans: UpstreamStatus[] = [];

  const notifyToolsChanged = () => {
    for (const s of sessions.values()) {
      void s.server.sendToolListChanged().catch(() => undefined);
    }
  };

  const planOptions = {
    node: options.node ?? process.execPath,
    resolveBin: binResolver(options.serversDirs),
    resolveImage: imageResolver(options.imagesDirs ?? DEFAULT_IMAGES_DIRS),
    stateDir: options.stateDir,
  };
  const upstreamFor = (plan: LaunchPlan) =>
    new Upstream(plan, {
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      callTimeoutMs: options.callTimeoutMs ?? 300_000,
      maxRestarts: options.maxRestarts ?? 3,
      restartWindowMs: options.restartWindowMs ?? 60_000,
      log,
      onChange: () => notifyToolsChanged(),
    });
  const unplanned = (plan: UnplannedServer): UpstreamStatus => ({
    name: plan.name,
    state: plan.pulling ? 'pulling' : 'failed',
    tools: 0,
    pid: null,
    restarts: 0,
    error: plan.error,
  });
  for (const plan of planLaunches(options.config, options.catalog, planOptions)) {
    if ('error' in plan) {
      failedPlans.push(unplanned(plan));
      log(`${plan.name}: ${plan.error}`);
      continue;
    }
    upstreams.set(plan.name, upstreamFor(plan));
  }

  // A server whose image is being pulled (the platform attaches it after the create answered) is planned again
  // until its image is there (then started, its tools announced) or its pull failed.
  const replan = async (): Promise<void> => {
    for (const [i, waiting] of failedPlans.entries()) {
      if (waiting.state !== 'pulling') continue;
      const one = { servers: { [waiting.name]: options.config.servers[waiting.name] }, custom: {} } as ValidMcpConfig;
      const [plan] = planLaunches(one, options.catalog, planOptions);
      if (plan === undefined || ('error' in plan && plan.pulling)) continue;
      if ('error' in plan) {
        failedPlans[i] = unplanned(plan);
        log(`${plan.name}: ${plan.error}`);
        notifyToolsChanged();
        continue;
      }
      failedPlans.splice(i, 1);
      const upstream = upstreamFor(plan);
      upstreams.set(plan.name, upstream);
      log(`${plan.name}: its image is there; starting it`);
      await upstream.start();
      notifyToolsChanged();
      return replan();
    }
  };
  let replanning = false;
  const pullWatch = setInterval(() => {
    if (replanning || !failedPlans.some((p) => p.state === 'pulling')) return;
    replanning = true;
    replan()
      .catch((err: unknown) => log(`planning a pulled image failed: ${(err as Error).message}`))
      .finally(() => {
        replanning = false;
      });
  }, 250);
  pullWatch.unref();

  const status = (): GatewayStatus => {
    const servers = [...failedPlans, ...[...upstreams.values()].map((u) => u.status())];
    return { ready: servers.every((s) => s.state !== 'starting'), servers };
  };

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    return match !== null && timingSafeEqual(digest(match[1]), tokenDigest);
  };

  const handleMcp = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (session === undefined) return jsonRpcError(res, 404, -32001, 'session not found: start a new one with initialize');
      session.seen = Date.now();
      return session.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return jsonRpcError(res, 400, -32000, 'no mcp-session-id header: POST an initialize request first');
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      const status = (err as { status?: number }).status ?? 400;
      return jsonRpcError(res, status, -32700, `bad request body: ${(err as Error).message}`);
    }
    if (!isInitializeRequest(body)) return jsonRpcError(res, 400, -32000, 'no mcp-session-id header: the first request must be initialize');
    const facade = createFacade(upstreams, '1', failedPlans);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Answer each POST with one JSON body rather than an SSE stream: a quarter of the round-trip time measured
      // (scripts/bench/mcp.ts), and the gateway sends nothing mid-call that would need a stream.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server: facade, seen: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await facade.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (url.pathname === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 3 });
      res.end('ok\n');
      return;
    }
    if (!authorized(req)) {
      jsonRpcError(res, 401, -32001, 'unauthorized: send Authorization: Bearer <the MCP token>', { 'www-authenticate': 'Bearer' });
      return;
    }
    if (url.pathname === '/status' && req.method === 'GET') {
      const body = JSON.stringify(status());
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    if (url.pathname !== MCP_PATH) {
      jsonRpcError(res, 404, -32601, `no such path ${url.pathname}: the MCP endpoint is ${MCP_PATH}`);
      return;
    }
    handleMcp(req, res).catch((err: unknown) => {
      log(`request failed: ${(err as Error).message}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'internal error');
      else res.destroy();
    });
  });

  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) {
        if (now - s.seen > idleMs) {
          sessions.delete(id);
          void s.transport.close().catch(() => undefined);
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? MCP_GATEWAY_PORT, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  log(`listening on ${address.address}:${address.port}${MCP_PATH}; starting ${upstreams.size} server(s)`);

  const settled = Promise.all([...upstreams.values()].map((u) => u.start())).then(() => status());

  return {
    port: address.port,
    host: address.address,
    settled,
    status,
    close: async () => {
      clearInterval(sweep);
      clearInterval(pullWatch);
      for (const s of sessions.values()) await s.transport.close().catch(() => undefined);
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...upstreams.values()].map((u) => u.stop()));
    },
  };
}
