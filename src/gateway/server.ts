import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { rawErrorResponse } from './error-response';
import { createHandler } from './handler';
import { DEFAULT_LIMITS, DEFAULTS, type GatewayLimits, type GatewayOptions } from './options';
import { SingleFlightResumer } from './resume';
import { routingHeadersFor } from './routing';
import { UpstreamPools } from './upstream-pool';
import { GatewayMetrics } from './prometheus';

export interface RunningGateway {
  host: string;
  port: number;
  /** Where GET /metrics is served, when metricsPort was given. */
  metricsPort?: number;
  /** Stops accepting, lets requests in flight finish for up to graceMs, then cuts what is left. */
  close(graceMs?: number): Promise<void>;
}

/** What the HTTP parser's complaints mean to a client. */
function parserErrorResponse(code: string | undefined): string {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return rawErrorResponse(431, 'Request Header Fields Too Large', 'request head too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawErrorResponse(408, 'Request Timeout', 'the request was not received in time');
    default:
      return rawErrorResponse(400, 'Bad Request', 'malformed HTTP request');
  }
}

/** Starts the gateway in this process. The catalog stays the caller's: close() does not close it. */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const limits: GatewayLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const log = options.log ?? (() => {});
  const pools = new UpstreamPools({
    maxSocketsPerUpstream: limits.maxSocketsPerUpstream,
    connectTimeoutMs: limits.connectTimeoutMs,
    upstreamTimeoutMs: limits.upstreamTimeoutMs,
  });
  const metrics = options.metricsPort !== undefined ? new GatewayMetrics() : undefined;
  const handler = createHandler({
    catalog: options.catalog,
    routing: { brands: routingHeadersFor(options.brand ?? DEFAULTS.brand), domain: options.domain ?? DEFAULTS.domain },
    forwarding: {
      pools,
      via: '1.1 sandbox-kit-gateway',
      upstreamTimeoutMs: limits.upstreamTimeoutMs,
      connectTimeoutMs: limits.connectTimeoutMs,
      ...(metrics ? { onUpstreamHead: (seconds: number) => metrics.upstreamHead(seconds) } : {}),
    },
    signedUrlOwner: options.signedUrlOwner,
    resumer: options.resumeSandbox ? new SingleFlightResumer(options.resumeSandbox, limits.resumeTimeoutMs) : undefined,
    ...(options.apiUpstream ? { api: { sandboxID: 'platform-api', ...options.apiUpstream, dropped: new Set<string>() } } : {}),
    log,
  });

  const server: Server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval; the default (30 s) would make them coarse.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    metrics ? metrics.counting(handler.request) : handler.request,
  );
  server.setTimeout(limits.idleTimeoutMs, (socket: Socket) => socket.destroy());

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const inResponse = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (err.code !== 'ECONNRESET' && socket.writable && !inResponse) socket.end(parserErrorResponse(err.code));
    socket.destroy();
  });
  server.on('upgrade', handler.upgrade);
  // CONNECT would name an address of the caller's choosing: refused, never routed.
  server.on('connect', (_req: unknown, socket: Socket) => {
    socket.on('error', () => {});
    if (socket.writable) socket.end(rawErrorResponse(501, 'Not Implemented', 'CONNECT is not supported by the gateway'));
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host: options.host ?? DEFAULTS.host, backlog: limits.listenBacklog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log(`server error: ${err.message}`));
  const address = server.address() as AddressInfo;
  const metricsServer = metrics ? await metrics.serve(options.host ?? DEFAULTS.host, options.metricsPort as number) : undefined;

  let closing: Promise<void> | undefined;
  return {
    host: address.address,
    port: address.port,
    ...(metricsServer ? { metricsPort: metricsServer.port } : {}),
    close(graceMs = 2000) {
      metricsServer?.server.close();
      metricsServer?.server.closeAllConnections();
      closing ??= new Promise<void>((resolve) => {
        const cutoff = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(cutoff);
          pools.close();
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
