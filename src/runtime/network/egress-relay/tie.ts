/**
 * The answer direction of a relayed connection: what the upstream sends goes to the client, and an error on the
 * upstream or either side closing ends both, so neither is left open alone. The request direction is the caller's
 * (it may check or rewrite what the client sends).
 */
import type * as net from 'node:net';

export function tieAnswers(client: net.Socket, upstream: net.Socket): void {
  upstream.on('error', () => {
    upstream.destroy();
    client.destroy();
  });
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  upstream.pipe(client);
}
