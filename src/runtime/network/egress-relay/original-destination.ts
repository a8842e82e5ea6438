/**
 * Where a redirected connection was going: the relay reads it from the connection tracking table of its own network
 * namespace (/proc/net/nf_conntrack), the entry whose original direction starts at the client's address and port and
 * whose reply comes from the relay's port. Parsing is pure.
 */
import { readFile } from 'node:fs/promises';

export const CONNTRACK_TABLE = '/proc/net/nf_conntrack';

export interface Endpoint {
  address: string;
  port: number;
}

/** The original destination of the TCP connection from `client` that was redirected to `relayPort`, in `table`. */
export function findOriginalDestination(table: string, client: Endpoint, relayPort: number): Endpoint | undefined {
  const needle = `src=${client.address} `;
  for (const line of table.split('\n')) {
    if (!line.includes(' tcp ') || !line.includes(needle)) continue;
    const src = [...line.matchAll(/src=(\S+)/g)].map((m) => m[1]);
    const dst = [...line.matchAll(/dst=(\S+)/g)].map((m) => m[1]);
    const sport = [...line.matchAll(/sport=(\d+)/g)].map((m) => Number(m[1]));
    const dport = [...line.matchAll(/dport=(\d+)/g)].map((m) => Number(m[1]));
    if (src[0] === client.address && sport[0] === client.port && sport[1] === relayPort && dport[1] === client.port && dst[0]) {
      return { address: dst[0], port: dport[0]! };
    }
  }
  return undefined;
}

export async function originalDestination(client: Endpoint, relayPort: number): Promise<Endpoint | undefined> {
  return findOriginalDestination(await readFile(CONNTRACK_TABLE, 'utf8'), client, relayPort);
}
