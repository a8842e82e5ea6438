import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { ClientConnection, type ConnectionHooks, type ConnectionLimits } from './client-connection';
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

  const hooks: ConnectionHooks = {
    request: handler.request,
    upgrade: handler.upgrade,
    ...(metrics ? { answered: (status: number) => metrics.answered(status) } : {}),
  };
  const connectionLimits: ConnectionLimits = {
    maxHeaderBytes: limits.maxHeaderBytes,
    headersTimeoutMs: limits.headersTimeoutMs,
    requestTimeoutMs: limits.requestTimeoutMs,
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    idleTimeoutMs: limits.idleTimeoutMs,
  };
  // One coarse clock and one timer for every connection's timeouts, not a timer per connection.
  let now = performance.now();
  const clock = () => now;
  const connections = new Set<ClientConnection>();
  const forget = (conn: ClientConnection) => connections.delete(conn);
  const tickMs = Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
  const ticker = setInterval(() => {
    now = performance.now();
    for (const conn of connections) conn.tick(now);
  }, tickMs);
  ticker.unref();
  const refresh = setInterval(() => (now = performance.now()), Math.min(tickMs, 50));
  refresh.unref();

  const server: Server = createServer({ noDelay: true }, (socket: Socket) => {
    now = performance.now();
    connections.add(new ClientConnection(socket, hooks, connectionLimits, clock, forget));
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
        const cutoff = setTimeout(() => {
          for (const conn of connections) conn.destroy();
        }, graceMs);
        server.close(() => {
          clearTimeout(cutoff);
          clearInterval(ticker);
          clearInterval(refresh);
          pools.close();
          resolve();
        });
        for (const conn of connections) conn.shutdown();
      });
      return closing;
    },
  };
}
