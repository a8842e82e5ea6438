/**
 * What finding a redirected connection's original destination costs the egress relay, the two ways it can read the
 * connection tracking table (src/runtime/network/egress-relay/original-destination.ts): procfs (one read of
 * /proc/net/nf_conntrack) against netlink (the conntrack tool asked for the client's tuple), per connection, with
 * the table holding a given number of other entries (UDP flows, as a bridge namespace tracks every sandbox's). In a
 * network namespace of its own: a listener, a nat REDIRECT to it, real redirected connections, each looked up both
 * ways in turn; median per lookup and the ratio netlink / procfs. Root only.
 *
 *   node dist/scripts/bench/original-destination.js [--entries 0,1000,10000] [--lookups 200]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import { parseArgs } from 'node:util';
import { type Endpoint, type Lookup, originalDestination } from '../../src/runtime/network/egress-relay/original-destination';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '0,1000,10000' },
    lookups: { type: 'string', default: '200' },
    inner: { type: 'boolean', default: false },
  },
});
const NAMESPACE = `skn2od${process.pid}`;
const LOCAL = '10.233.7.1';
const TARGET = '10.233.7.99';
const FILLER = '10.233.7.50';
const PORT = 15999;

function log(msg: string): void {
  process.stderr.write(`original-destination: ${msg}\n`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** `count` more UDP flows in the table: one socket, datagrams to as many ports of an address nobody answers on. */
async function fill(count: number): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, LOCAL, resolve));
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve, reject) => socket.send('x', 1024 + i, FILLER, (err) => (err ? reject(err) : resolve())));
  }
  socket.close();
}

function connectRedirected(): Promise<{ client: net.Socket; source: Endpoint }> {
  return new Promise((resolve, reject) => {
    const client = net.connect({ host: TARGET, port: 443, localAddress: LOCAL }, () =>
      resolve({ client, source: { address: LOCAL, port: client.localPort! } }),
    );
    client.once('error', reject);
  });
}

async function inner(): Promise<void> {
  execFileSync('ip', ['link', 'set', 'lo', 'up']);
  execFileSync('ip', ['addr', 'add', `${LOCAL}/24`, 'dev', 'lo']);
  execFileSync('sysctl', ['-q', '-w', 'net.netfilter.nf_conntrack_udp_timeout=600']);
  execFileSync('iptables', ['-t', 'nat', '-A', 'OUTPUT', '-p', 'tcp', '-d', TARGET, '-j', 'REDIRECT', '--to-ports', String(PORT)]);
  const server = net.createServer((s) => s.on('error', () => s.destroy()));
  await new Promise<void>((resolve) => server.listen(PORT, '0.0.0.0', resolve));
  const sizes = values.entries.split(',').map(Number);
  const lookups = Number(values.lookups);
  const rows: string[] = [];
  let filled = 0;
  for (const size of sizes) {
    await fill(size - filled);
    filled = size;
    const took: Record<Lookup, number[]> = { procfs: [], netlink: [] };
    for (let i = 0; i < lookups; i++) {
      const { client, source } = await connectRedirected();
      // Both ways, in alternating order, on the same connection; each must find it.
      const order: Lookup[] = i % 2 === 0 ? ['procfs', 'netlink'] : ['netlink', 'procfs'];
      for (const lookup of order) {
        const started = process.hrtime.bigint();
        const found = await originalDestination(source, PORT, lookup);
        took[lookup].push(Number(process.hrtime.bigint() - started) / 1e6);
        if (found.destination?.address !== TARGET) throw new Error(`${lookup} did not find ${source.address}:${source.port}`);
      }
      client.destroy();
    }
    const p = median(took.procfs);
    const n = median(took.netlink);
    rows.push(`| ${size} | ${p.toFixed(2)} | ${n.toFixed(2)} | ${(n / p).toFixed(2)} |`);
    log(`${size} other entries: procfs ${p.toFixed(2)} ms, netlink ${n.toFixed(2)} ms`);
  }
  server.close();
  process.stdout.write(
    [
      `original destination lookup, median of ${lookups} per table size (ms)`,
      '| other entries | procfs | netlink (conntrack -L) | netlink / procfs |',
      '|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

function outer(): void {
  execFileSync('ip', ['netns', 'add', NAMESPACE]);
  try {
    const r = spawnSync('ip', ['netns', 'exec', NAMESPACE, process.execPath, __filename, '--inner', ...process.argv.slice(2)], {
      stdio: 'inherit',
    });
    if (r.status !== 0) process.exitCode = r.status ?? 1;
  } finally {
    execFileSync('ip', ['netns', 'del', NAMESPACE]);
  }
}

if (values.inner) {
  inner().catch((err: Error) => {
    log(err.message);
    process.exit(1);
  });
} else {
  outer();
}
