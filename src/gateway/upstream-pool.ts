import { isIP } from 'node:net';
import { buildConnector, Pool } from 'undici';
import { upstreamConnector } from './upstream-socket';

export interface UpstreamPoolSettings {
  /** Connections the gateway opens to one sandbox port at most; further requests queue. */
  maxSocketsPerUpstream: number;
  /** Longest wait for a new TCP connection to a sandbox port. */
  connectTimeoutMs: number;
  /** Longest wait for a sandbox's response head. */
  upstreamTimeoutMs: number;
}

/**
 * One keep-alive connection pool per upstream address (host:port), undici's: it writes every request's framing
 * itself (Content-Length or chunked, checked against the bytes actually sent) and parses responses strictly.
 * Pools are keyed by address, not by sandbox: the gateway has already decided the address is allowed before it asks
 * for a pool. Idle pools are swept periodically so a long-lived gateway does not keep one per sandbox it ever saw.
 */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly settings: UpstreamPoolSettings,
    sweepEveryMs = 30_000,
  ) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  /** `tls`: HTTPS, the upstream's certificate checked against `host` (undici's own TLS connector). */
  poolFor(host: string, port: number, tls = false): Pool {
    const key = tls ? `tls:${host}:${port}` : `${host}:${port}`;
    let pool = this.pools.get(key);
    if (!pool) {
      const scheme = tls ? 'https' : 'http';
      const origin = isIP(host) === 6 ? `${scheme}://[${host}]:${port}` : `${scheme}://${host}:${port}`;
      pool = new Pool(origin, {
        connections: this.settings.maxSocketsPerUpstream,
        // One request per connection at a time: a sandbox service need not support pipelining.
        pipelining: 1,
        connect: tls ? buildConnector({ timeout: this.settings.connectTimeoutMs }) : upstreamConnector(this.settings.connectTimeoutMs),
        headersTimeout: this.settings.upstreamTimeoutMs,
        // Streams (process output, file downloads) may pause for as long as they like; idle clients are bounded by
        // the server side's idle timeout instead.
        bodyTimeout: 0,
        strictContentLength: true,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  get size(): number {
    return this.pools.size;
  }

  private sweep(): void {
    for (const [key, pool] of this.pools) {
      const stats = pool.stats;
      // Idle connections close after undici's keep-alive timeout (a few seconds), so an unused pool reaches zero.
      if (stats.connected === 0 && stats.running === 0 && stats.pending === 0 && stats.queued === 0) {
        this.pools.delete(key);
        pool.destroy().catch(() => {});
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const pool of this.pools.values()) pool.destroy().catch(() => {});
    this.pools.clear();
  }
}
