import { UpstreamClient, type UpstreamTls } from './upstream-client';

export interface UpstreamPoolSettings {
  /** Connections the gateway opens to one sandbox port at most; further requests queue. */
  maxSocketsPerUpstream: number;
  /** Longest wait for a new TCP connection to a sandbox port. */
  connectTimeoutMs: number;
  /** Longest wait for a sandbox's response head. */
  upstreamTimeoutMs: number;
}

/**
 * An idle keep-alive connection is closed after this long: below the keep-alive timeouts servers commonly use
 * (Node's 5 s), so the gateway, not the server, is the side that closes, and a call is rarely sent on a connection
 * the server has just closed.
 */
const IDLE_TIMEOUT_MS = 4_000;

/**
 * One client per upstream address (host:port, and whether TLS): keep-alive connections to it (upstream-client.ts).
 * Clients are keyed by address, not by sandbox: the gateway has already decided the address is allowed before it
 * asks for one. One timer for all of them checks heads overdue and idle connections; unused clients are dropped
 * periodically so a long-lived gateway does not keep one per sandbox it ever saw.
 */
export class UpstreamPools {
  private readonly clients = new Map<string, UpstreamClient>();
  private readonly ticker: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly settings: UpstreamPoolSettings,
    sweepEveryMs = 30_000,
  ) {
    // Timeouts are checked at a quarter of the shortest one (at most every second): one timer, not one per call.
    const tickMs = Math.max(10, Math.min(1000, Math.floor(Math.min(settings.upstreamTimeoutMs, IDLE_TIMEOUT_MS) / 4)));
    this.ticker = setInterval(() => this.tick(), tickMs);
    this.ticker.unref();
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  /** `tls`: HTTPS, and whether the upstream's certificate is checked (upstream-client.ts). */
  poolFor(host: string, port: number, tls?: UpstreamTls): UpstreamClient {
    const key = tls ? `${tls}:${host}:${port}` : `${host}:${port}`;
    let client = this.clients.get(key);
    if (!client) {
      client = new UpstreamClient(host, port, tls, {
        maxConnections: this.settings.maxSocketsPerUpstream,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        headersTimeoutMs: this.settings.upstreamTimeoutMs,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
      });
      this.clients.set(key, client);
    }
    return client;
  }

  get size(): number {
    return this.clients.size;
  }

  private tick(): void {
    const now = performance.now();
    for (const client of this.clients.values()) client.tick(now);
  }

  private sweep(): void {
    for (const [key, client] of this.clients) {
      if (client.unused) {
        this.clients.delete(key);
        client.close();
      }
    }
  }

  close(): void {
    clearInterval(this.ticker);
    clearInterval(this.sweeper);
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}
