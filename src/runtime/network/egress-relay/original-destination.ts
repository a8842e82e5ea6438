/**
 * Where a redirected connection was going: the entry of the connection tracking table of the relay's own network
 * namespace whose original direction starts at the client's address and port and whose reply comes from the relay's
 * port. Two ways to read that table, one format (parsed here, purely):
 * - procfs: /proc/net/nf_conntrack, one read of the whole table per connection, no process. Only kernels built with
 *   NF_CONNTRACK_PROCFS have it (upstream stopped defaulting it to y in 2022).
 * - netlink: `conntrack -L` (Debian's conntrack package) asked for the client's tuple only; the kernel filters, and
 *   it works on every kernel with connection tracking, at the cost of one short process per connection.
 * `auto` takes procfs while the file is there, else netlink. (SO_ORIGINAL_DST on the accepted socket would need
 * getsockopt, which Node does not offer; TPROXY needs IP_TRANSPARENT on the listening socket, the same.)
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export const CONNTRACK_TABLE = '/proc/net/nf_conntrack';
export const CONNTRACK_TOOL = 'conntrack';
const TOOL_TIMEOUT_MS = 5_000;

export const LOOKUP_CHOICES = ['auto', 'procfs', 'netlink'] as const;
export type LookupChoice = (typeof LOOKUP_CHOICES)[number];
export type Lookup = Exclude<LookupChoice, 'auto'>;

export interface Endpoint {
  address: string;
  port: number;
}

export function isLookupChoice(value: string): value is LookupChoice {
  return (LOOKUP_CHOICES as readonly string[]).includes(value);
}

/** The way to read the table: the one asked for, or for `auto` procfs while its file is there, else netlink. */
export function chooseLookup(choice: LookupChoice, procfsPresent: boolean): Lookup {
  if (choice !== 'auto') return choice;
  return procfsPresent ? 'procfs' : 'netlink';
}

/**
 * The original destination of the TCP connection from `client` that was redirected to `relayPort`, in `table`: lines
 * of /proc/net/nf_conntrack (`ipv4 2 tcp 6 …`) or of `conntrack -L` (`tcp 6 …`).
 */
export function findOriginalDestination(table: string, client: Endpoint, relayPort: number): Endpoint | undefined {
  const needle = `src=${client.address} `;
  for (const line of table.split('\n')) {
    if (!/(^|\s)tcp\s/.test(line) || !line.includes(needle)) continue;
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

/** The `conntrack` arguments that list the TCP entries whose original direction starts at `client`. */
export function conntrackArgs(client: Endpoint): string[] {
  return ['-L', '-p', 'tcp', '--orig-src', client.address, '--orig-port-src', String(client.port)];
}

function listWithTool(client: Endpoint): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(CONNTRACK_TOOL, conntrackArgs(client), { timeout: TOOL_TIMEOUT_MS }, (err, stdout, stderr) => {
      if (err) {
        const why =
          (err as NodeJS.ErrnoException).code === 'ENOENT'
            ? `${CONNTRACK_TOOL} is not installed (Debian package conntrack)`
            : stderr.trim();
        reject(new Error(`${CONNTRACK_TOOL} ${conntrackArgs(client).join(' ')}: ${why || err.message}`));
      } else resolve(stdout);
    });
  });
}

/**
 * The table's lines for `client`, read the way `choice` says. `auto` looks for the procfs file per connection: it
 * appears only once the conntrack module is loaded, which may be after the relay started.
 */
async function tableFor(choice: LookupChoice, client: Endpoint): Promise<{ lookup: Lookup; table: string }> {
  const lookup = chooseLookup(choice, existsSync(CONNTRACK_TABLE));
  return { lookup, table: lookup === 'procfs' ? await readFile(CONNTRACK_TABLE, 'utf8') : await listWithTool(client) };
}

/** The original destination of `client`'s redirected connection, and the way it was read. Throws when it cannot read. */
export async function originalDestination(
  client: Endpoint,
  relayPort: number,
  choice: LookupChoice,
): Promise<{ lookup: Lookup; destination: Endpoint | undefined }> {
  const { lookup, table } = await tableFor(choice, client);
  return { lookup, destination: findOriginalDestination(table, client, relayPort) };
}
