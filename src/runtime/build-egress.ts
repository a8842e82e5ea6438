/**
 * The one way out of a template build step: an HTTP(S) forward proxy run by the platform, on a Unix socket no
 * sandbox can reach. A step's network namespace has nothing but loopback; a relay there (127.0.0.1:BUILD_PROXY_PORT,
 * a host process inside the step's namespace) hands each connection to this socket, and the step gets
 * http_proxy/https_proxy pointing at it. So apt, curl, pip and npm reach the mirror and registries, and nothing
 * else: the proxy resolves every name itself and refuses loopback, private, link-local (cloud metadata), multicast
 * and reserved destinations (PRIVATE_DESTINATIONS, the same list the Shadowsocks proxy refuses) and the networks of
 * the host's own interfaces.
 *
 * A host that itself reaches the internet only through an HTTP proxy gives the platform the usual variables
 * (build-proxy-env.ts): then connections go on through that proxy, after the same check of the name (a name that
 * does not resolve here is left to it).
 */
import * as dns from 'node:dns/promises';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import { PRIVATE_DESTINATIONS } from './network/private-ranges';

export const BUILD_PROXY_PORT = 3128;

/** The refused ranges as a matcher. */
export function blockedDestinations(extra: readonly string[] = []): net.BlockList {
  const list = new net.BlockList();
  for (const cidr of [...PRIVATE_DESTINATIONS, ...extra]) {
    const [address, prefix] = cidr.split('/');
    list.addSubnet(address!, Number(prefix), net.isIPv6(address!) ? 'ipv6' : 'ipv4');
  }
  return list;
}

export function isBlocked(list: net.BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const a = mapped ? mapped[1]! : address;
  return list.check(a, net.isIPv6(a) ? 'ipv6' : 'ipv4');
}

export type Resolution = { ok: true; address: string | undefined } | { ok: false; reason: string };

/** Where a step may connect for `host`: an address that is not blocked, or (with an upstream) the name itself. */
export async function resolveAllowed(host: string, list: net.BlockList, hasUpstream: boolean): Promise<Resolution> {
  const name = host.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(name)) addresses = [name];
  else {
    try {
      addresses = (await dns.lookup(name, { all: true })).map((a) => a.address);
    } catch (err) {
      if (hasUpstream) return { ok: true, address: undefined };
      return { ok: false, reason: `cannot resolve ${name}: ${(err as Error).message}` };
    }
  }
  const bad = addresses.find((a) => isBlocked(list, a));
  if (bad !== undefined)
    return {
      ok: false,
      reason: `template builds may not reach ${name} (${bad}): loopback, private, link-local and metadata destinations are refused`,
    };
  return { ok: true, address: addresses[0] };
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  return { host: m?.[1] ?? authority, port: m?.[2] ? Number(m[2]) : defaultPort };
}

export interface BuildEgressOptions {
  socketPath: string;
  /** An HTTP proxy the host itself needs (http://host:port), from the platform's environment. */
  upstream?: string;
  /** More refused ranges; the host's own networks are always refused (hostNetworks()). */
  blockedCidrs?: readonly string[];
}

/** The networks of this host's interfaces (they need not be private: a VM may sit on any range). */
export function hostNetworks(): string[] {
  const out: string[] = [];
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.cidr && !a.address.startsWith('fe80')) out.push(networkOf(a.cidr));
  return [...new Set(out)];
}

/** The network of an interface's address/prefix (host bits cleared); IPv6 kept as given. */
export function networkOf(cidr: string): string {
  const [address, prefix] = cidr.split('/');
  if (!net.isIPv4(address!)) return cidr;
  const bits = Number(prefix);
  const n = address!.split('.').reduce((acc, b) => (acc << 8) + Number(b), 0) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const m = (n & mask) >>> 0;
  return `${[24, 16, 8, 0].map((s) => (m >>> s) & 255).join('.')}/${bits}`;
}

export interface BuildEgress {
  socketPath: string;
  close(): Promise<void>;
}

export async function startBuildEgress(options: BuildEgressOptions): Promise<BuildEgress> {
  const list = blockedDestinations([...hostNetworks(), ...(options.blockedCidrs ?? [])]);
  const upstream = options.upstream ? new URL(options.upstream) : undefined;
  const upstreamAt = upstream ? { host: upstream.hostname, port: Number(upstream.port || 80) } : undefined;

  const server = http.createServer(async (req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('only http:// URLs (https goes through CONNECT)');
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad proxy request: ${(err as Error).message}\n`);
      return;
    }
    const r = await resolveAllowed(target.hostname, list, upstream !== undefined);
    if (!r.ok) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`${r.reason}\n`);
      return;
    }
    const headers: http.OutgoingHttpHeaders = { ...req.headers, host: target.host };
    delete headers['proxy-connection'];
    const out = upstreamAt
      ? http.request({ ...upstreamAt, method: req.method, path: target.href, headers })
      : http.request({
          host: r.address,
          port: Number(target.port || 80),
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers,
        });
    out.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream error: ${err.message}\n`);
    });
    req.pipe(out);
  });

  server.on('connect', async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    const { host, port } = splitHostPort(req.url ?? '', 443);
    const r = await resolveAllowed(host, list, upstream !== undefined);
    if (!r.ok) {
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${r.reason}\n`);
      return;
    }
    const remote = upstreamAt ? net.connect(upstreamAt) : net.connect({ host: r.address!, port });
    remote.on('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    remote.once('connect', () => {
      if (upstreamAt) {
        remote.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
      } else client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) remote.write(head);
      // Through an upstream, its own "200 Connection Established" reaches the client as the answer.
      remote.pipe(client);
      client.pipe(remote);
    });
  });

  fs.rmSync(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => resolve());
  });
  fs.chmodSync(options.socketPath, 0o600);
  server.unref();
  return {
    socketPath: options.socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A relay for one step: address:port (the step's loopback, or under runsc the relay's end of its link,
 * build-relay-link.ts) -> the egress socket (a host path). Run with node -e.
 */
export const RELAY_SCRIPT = `const net=require('net');const [sock,port,host]=process.argv.slice(1);
net.createServer((c)=>{const u=net.connect(sock);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy());c.pipe(u).pipe(c);})
.listen(Number(port),host,()=>process.stdout.write('ready\\n'));`;
