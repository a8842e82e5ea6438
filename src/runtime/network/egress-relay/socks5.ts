/**
 * A SOCKS5 client (RFC 1928 CONNECT, RFC 1929 user and password): the relay's way out for a sandbox with an egress
 * proxy. The target is an IPv4 address, or a domain name the proxy resolves (ATYP 3), as E2B does for domain-matched
 * connections. The message builders are pure.
 */
import * as net from 'node:net';

export interface Socks5Proxy {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

const REPLIES: Record<number, string> = {
  1: 'general failure',
  2: 'connection not allowed by ruleset',
  3: 'network unreachable',
  4: 'host unreachable',
  5: 'connection refused',
  6: 'TTL expired',
  7: 'command not supported',
  8: 'address type not supported',
};

export function greeting(withPassword: boolean): Buffer {
  return Buffer.from(withPassword ? [5, 2, 0, 2] : [5, 1, 0]);
}

export function passwordRequest(username: string, password: string): Buffer {
  const u = Buffer.from(username, 'utf8');
  const p = Buffer.from(password, 'utf8');
  if (u.length > 255 || p.length > 255) throw new Error('SOCKS5 user name and password are at most 255 bytes each');
  return Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]);
}

export function connectRequest(host: string, port: number): Buffer {
  const portBytes = Buffer.from([port >> 8, port & 255]);
  if (net.isIPv4(host)) return Buffer.concat([Buffer.from([5, 1, 0, 1, ...host.split('.').map(Number)]), portBytes]);
  const name = Buffer.from(host, 'latin1');
  if (name.length > 255) throw new Error(`host name too long for SOCKS5: ${host}`);
  return Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes]);
}

/** Reads exactly what the proxy answers, in order. */
class Reader {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(private readonly socket: net.Socket) {
    socket.on('data', this.onData);
    socket.once('error', (err) => this.fail(err));
    socket.once('close', () => this.fail(new Error('the proxy closed the connection')));
  }

  private readonly onData = (chunk: Buffer) => {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    this.waiting?.();
  };

  private fail(err: Error): void {
    this.failure ??= err;
    this.waiting?.();
  }

  async take(n: number): Promise<Buffer> {
    while (this.buffered.length < n) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = undefined;
    }
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(n);
    return out;
  }

  /** Stops reading; what came after the handshake (none: the proxy waits for the client) is handed back. */
  release(): Buffer {
    this.socket.off('data', this.onData);
    return this.buffered;
  }
}

/** A connection to `host:port` through the proxy, ready for the client's bytes; throws with the proxy's reason. */
export async function connectThrough(
  proxy: Socks5Proxy,
  proxyAddress: string,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<net.Socket> {
  const socket = net.connect({ host: proxyAddress, port: proxy.port });
  socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`the SOCKS5 proxy ${proxy.host}:${proxy.port} did not answer in time`)));
  const reader = new Reader(socket);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const withPassword = proxy.username !== undefined;
    socket.write(greeting(withPassword));
    const [version, method] = await reader.take(2);
    if (version !== 5) throw new Error(`${proxy.host}:${proxy.port} does not speak SOCKS5`);
    if (method === 2 && withPassword) {
      socket.write(passwordRequest(proxy.username!, proxy.password ?? ''));
      const [, status] = await reader.take(2);
      if (status !== 0) throw new Error(`the SOCKS5 proxy refused the user name and password`);
    } else if (method !== 0) {
      throw new Error(`the SOCKS5 proxy accepts none of the offered methods (${withPassword ? 'none, password' : 'none'})`);
    }
    socket.write(connectRequest(host, port));
    const [, reply, , atyp] = await reader.take(4);
    if (reply !== 0) throw new Error(`the SOCKS5 proxy could not connect to ${host}:${port}: ${REPLIES[reply!] ?? `reply ${reply}`}`);
    const addressLength = atyp === 1 ? 4 : atyp === 4 ? 16 : atyp === 3 ? (await reader.take(1))[0]! : -1;
    if (addressLength < 0) throw new Error(`the SOCKS5 proxy answered an unknown address type ${atyp}`);
    await reader.take(addressLength + 2);
    const rest = reader.release();
    if (rest.length > 0) socket.unshift(rest);
    socket.setTimeout(0);
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}
