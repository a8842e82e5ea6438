/**
 * Protocol upgrades (WebSocket) through the gateway: once the caller may reach the port, the request head goes to
 * the sandbox with the same end-to-end fields as any forwarded call plus its Upgrade and Connection, and from then
 * on bytes flow both ways untouched, for as long as either side keeps the connection. The sandbox's own answer (101,
 * or a refusal) is the answer.
 */
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { RequestHead } from './client-connection';
import { rawErrorFor, upstreamTimedOut, upstreamUnreachable } from './error-response';
import type { ForwardTarget } from './forward';
import { forwardedRequestHeaders } from './hop-by-hop';
import { upstreamTlsOptions } from './upstream-client';

/** The head sent to the sandbox: request line, forwarded fields, then the upgrade itself. */
export function upgradeHead(req: RequestHead, target: ForwardTarget, via: string): string {
  const fields = forwardedRequestHeaders(req.rawHeaders, req.headers, via, req.remoteAddress, target.dropped, target.requestHost);
  const lines = [`${req.method} ${req.url} HTTP/1.1`];
  for (let i = 0; i < fields.length; i += 2) lines.push(`${fields[i]}: ${fields[i + 1]}`);
  lines.push('connection: upgrade', `upgrade: ${String(req.headers.upgrade)}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export function tunnel(
  req: RequestHead,
  client: Socket,
  head: Buffer,
  target: ForwardTarget,
  settings: { via: string; connectTimeoutMs: number },
): void {
  const upstream = target.tls
    ? tlsConnect(upstreamTlsOptions(target.host, target.port, target.tls))
    : connect({ host: target.host, port: target.port });
  let connected = false;
  const timer = setTimeout(() => {
    if (client.writable) client.end(rawErrorFor(upstreamTimedOut(target.sandboxID, target.port, settings.connectTimeoutMs)));
    upstream.destroy();
  }, settings.connectTimeoutMs);
  upstream.setNoDelay(true);
  client.setNoDelay(true);
  // A WebSocket may be quiet for long: the HTTP server's idle timeout no longer applies to it.
  client.setTimeout(0);
  upstream.once(target.tls ? 'secureConnect' : 'connect', () => {
    connected = true;
    clearTimeout(timer);
    upstream.write(upgradeHead(req, target, settings.via));
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(timer);
    if (!connected && client.writable) {
      client.end(rawErrorFor(upstreamUnreachable(target.sandboxID, target.port, `connection failed: ${err.code ?? err.message}`)));
      return;
    }
    client.destroy();
  });
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
}
