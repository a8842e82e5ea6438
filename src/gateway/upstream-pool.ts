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
/** The inner key of a client: its port and TLS mode as one number (no key string built per request). */
const TLS_MODES: readonly UpstreamTls[] = [undefined, 'verified', 'unverified'];
const addressKey = (port: number, tls: UpstreamTls) => port * TLS_MODES.length + TLS_MODES.indexOf(tls);

export class UpstreamPools {
  /** By host, then by port and TLS mode. */
  private readonly clients = new Map<string, Map<number, UpstreamClient>>();
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
    let byAddress = this.clients.get(host);
    if (byAddress === undefined) {
      byAddress = new Map();
      this.clients.set(host, byAddress);
    }
    const key = addressKey(port, tls);
    let client = byAddress.get(key);
    if (!client) {
      client = new UpstreamClient(host, port, tls, {
        maxConnections: this.settings.maxSocketsPerUpstream,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        headersTimeoutMs: this.settings.upstreamTimeoutMs,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
      });
      byAddress.set(key, client);
    }
    return client;
  }

  get size(): number {
    let n = 0;
    for (const byAddress of this.clients.values()) n += byAddress.size;
    return n;
  }

  private tick(): void {
    const now = performance.now();
    for (const byAddress of this.clients.values()) for (const client of byAddress.values()) client.tick(now);
  }

  private sweep(): void {
    for (const [host, byAddress] of this.clients) {
      for (const [key, client] of byAddress) {
        if (client.unused) {
          byAddress.delete(key);
          client.close();
        }
      }
      if (byAddress.size === 0) this.clients.delete(host);
    }
  }

  close(): void {
    clearInterval(this.ticker);
    clearInterval(this.sweeper);
    for (const byAddress of this.clients.values()) for (const client of byAddress.values()) client.close();
    this.clients.clear();
  }
}
