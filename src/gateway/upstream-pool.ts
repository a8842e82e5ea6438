import { Agent } from 'node:http';

/**
 * One keep-alive connection pool per upstream address (host:port). Pools are keyed by address, not by
 * sandbox: the gateway has already decided the address is allowed before it asks for a pool.
 * Empty pools are swept periodically so a long-lived gateway does not keep one per sandbox it ever saw.
 */
export class UpstreamPools {
  private readonly pools = new Map<string, Agent>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly maxSocketsPerUpstream: number, sweepEveryMs = 30_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  poolFor(host: string, port: number): Agent {
    const key = `${host}:${port}`;
    let pool = this.pools.get(key);
    if (!pool) {
      // lifo keeps the most recently used sockets warm and lets the rest expire on the upstream's keep-alive timeout.
      pool = new Agent({ keepAlive: true, maxSockets: this.maxSocketsPerUpstream, maxFreeSockets: 256, scheduling: 'lifo' });
      this.pools.set(key, pool);
    }
    return pool;
  }

  get size(): number {
    return this.pools.size;
  }

  private sweep(): void {
    for (const [key, pool] of this.pools) {
      const busy = Object.keys(pool.sockets).length + Object.keys(pool.freeSockets).length + Object.keys(pool.requests).length;
      if (busy === 0) {
        pool.destroy();
        this.pools.delete(key);
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const pool of this.pools.values()) pool.destroy();
    this.pools.clear();
  }
}
