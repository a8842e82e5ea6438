/**
 * The gateway's Prometheus metrics (prom-client, one registry per gateway): requests by status code and how long
 * sandboxes take to answer (their response head, measured from when the gateway sent the call). Served on a
 * listener of its own (`metricsPort`): every path of the gateway's own port belongs to the sandboxes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Histogram, Registry } from 'prom-client';

const UPSTREAM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'status'>;
  private readonly upstream: Histogram;

  constructor() {
    this.requests = new Counter({
      name: 'sandboxkit_gateway_requests_total',
      help: "Requests the gateway answered, by status code (the sandbox's own, or the gateway's 4xx/5xx).",
      labelNames: ['status'],
      registers: [this.registry],
    });
    this.upstream = new Histogram({
      name: 'sandboxkit_gateway_upstream_seconds',
      help: 'How long sandboxes took to send their response head after the gateway sent them the call.',
      buckets: UPSTREAM_BUCKETS,
      registers: [this.registry],
    });
  }

  /** One answered request, by its status. */
  answered(status: number): void {
    this.requests.inc({ status: String(status) });
  }

  upstreamHead(seconds: number): void {
    this.upstream.observe(seconds);
  }

  /** Serves `GET /metrics` on host:port (0 picks a free port). */
  async serve(host: string, port: number): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return { server, port: (server.address() as AddressInfo).port };
  }
}
