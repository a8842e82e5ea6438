import { DEFAULT_BRAND } from '../contract/brand';
import { SERVER_KEEP_ALIVE_MS } from '../contract/keep-alive';
import type { Catalog } from '../catalog/types';
import type { ResumeSandbox } from './resume';
import type { SignedUrlOwnerLookup } from './signed-url';

/** Protections against slow or oversized clients, and bounds on waiting for sandboxes. */
export interface GatewayLimits {
  /** Largest request head in bytes; larger ones get 431. */
  maxHeaderBytes: number;
  /** A client must send its whole request head within this time (slow-header clients get 408). */
  headersTimeoutMs: number;
  /** A client must send its whole request (head and body) within this time. */
  requestTimeoutMs: number;
  /** A connection with no traffic in either direction for this long is closed. */
  idleTimeoutMs: number;
  /** How long an idle keep-alive client connection is kept (default: longer than clients keep theirs, keep-alive.ts). */
  keepAliveTimeoutMs: number;
  /** Longest wait for a sandbox's response head, unless Connect-Timeout-Ms asks for less (then 504). */
  upstreamTimeoutMs: number;
  /** Longest wait for a new TCP connection to a sandbox port (then 504). */
  connectTimeoutMs: number;
  /** Longest wait for an auto-resume (then 502). */
  resumeTimeoutMs: number;
  /** Connections the gateway opens to one sandbox port at most; further requests queue. */
  maxSocketsPerUpstream: number;
  /**
   * Length of the queue of connections the kernel has accepted but the gateway not yet taken (listen backlog).
   * Bursts of new connections beyond it are dropped by the kernel; Linux caps it at net.core.somaxconn.
   */
  listenBacklog: number;
}

export const DEFAULT_LIMITS: GatewayLimits = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  idleTimeoutMs: 120_000,
  keepAliveTimeoutMs: SERVER_KEEP_ALIVE_MS,
  upstreamTimeoutMs: 300_000,
  connectTimeoutMs: 5_000,
  resumeTimeoutMs: 60_000,
  maxSocketsPerUpstream: 1024,
  // Node's default is 511, which a burst of 2,000 new connections overflowed; 4096 is somaxconn's default since Linux 5.4.
  listenBacklog: 4096,
};

export interface ApiUpstream {
  host: string;
  port: number;
  /** HTTPS, its certificate checked against `host`. */
  tls?: 'verified';
}

/**
 * `--api-upstream`: `HOST:PORT` (plain HTTP), or a URL `http://HOST[:PORT]` / `https://HOST[:PORT]` with no path.
 * Undefined when the text is none of these.
 */
export function parseApiUpstream(text: string): ApiUpstream | undefined {
  const bare = /^([A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(text);
  if (bare) return validPort({ host: bare[1], port: Number(bare[2]) });
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const tls = url.protocol === 'https:';
  if (!tls && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || !/^\/?$/.test(url.pathname)) return undefined;
  if (url.hostname === '' || url.hostname.startsWith('[')) return undefined;
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  return validPort({ host: url.hostname, port, ...(tls ? { tls: 'verified' as const } : {}) });
}

const validPort = (u: ApiUpstream): ApiUpstream | undefined => (u.port >= 1 && u.port <= 65535 ? u : undefined);

export interface GatewayOptions {
  catalog: Catalog;
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** The brand token shared with the agent: `Svc` gives `Svc-Sandbox-Id` / `Svc-Sandbox-Port`. */
  brand?: string;
  /** Domain of the host form `{port}-{sandboxID}.{domain}`. */
  domain?: string;
  /**
   * The platform API, for requests whose Host is `api.{domain}`: the E2B_DOMAIN form sends API calls to the same name
   * and port as the sandboxes, which behind one TLS listener is this gateway. Plain HTTP, or HTTPS with `tls` (the
   * API's certificate is checked against `host`, as any HTTPS client does): a fleet's gateways reach the API through
   * the load balancer's TLS listener.
   */
  apiUpstream?: ApiUpstream;
  /** Resumes paused sandboxes whose entry has autoResume; without it they answer 502. */
  resumeSandbox?: ResumeSandbox;
  /** Finds the sandbox a signed /files URL without a sandbox ID belongs to; without it such URLs answer 400. */
  signedUrlOwner?: SignedUrlOwnerLookup;
  /** Serve Prometheus metrics (GET /metrics) on this port of `host` (0 picks one); absent: not served. */
  metricsPort?: number;
  limits?: Partial<GatewayLimits>;
  /** Operational messages (never tokens). */
  log?: (line: string) => void;
}

export const DEFAULTS = { host: '127.0.0.1', brand: DEFAULT_BRAND, domain: 'localhost' } as const;
