/**
 * The egress relay: one process in a bridge namespace, started by the platform (relay-process.ts), that a sandbox's
 * new TCP connections are redirected to (egress-policy.ts): every one when its policy names a proxy, those to denied
 * addresses when it names domains. For each connection it finds where the sandbox was going
 * (original-destination.ts) and the sandbox's policy (the file of its source address, which the bridge pins to the
 * sandbox), waits for the TLS SNI or HTTP Host when the decision depends on it (first-bytes.ts), decides
 * (relay-policy.ts), and connects directly or through the sandbox's SOCKS5 proxy (socks5.ts); a plain HTTP connection
 * admitted by its Host is followed request by request (http-requests.ts). Anything it cannot decide is refused (a reset): no policy file, no tracked destination, a name
 * that does not resolve to the destination, a proxy that fails. It exits once its namespace is gone.
 *
 * Usage: egress-relay --dir DIR --port PORT --netns NAME [--original-destination auto|procfs|netlink]
 * (how original destinations are read, original-destination.ts; default auto).
 */
import * as dns from 'node:dns/promises';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import { matchesDomain } from '../domain-names';
import { MAX_FIRST_BYTES, nameInFirstBytes } from './first-bytes';
import { RequestSplitter } from './http-requests';
import { type Endpoint, isLookupChoice, LOOKUP_CHOICES, type Lookup, type LookupChoice, originalDestination } from './original-destination';
import { needsName, plan, readRelayPolicy, type RelayPolicy } from './relay-policy';
import { connectThrough } from './socks5';
import { TRANSFORM_PORT } from '../egress-policy';
import { rulesFor } from '../transform-rules';
import { interceptTls } from './transform';
import { tieAnswers } from './tie';

const FIRST_BYTES_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 15_000;

function option(argv: string[], name: string, fallback?: string): string {
  const i = argv.indexOf(`--${name}`);
  const value = i >= 0 ? argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`egress-relay: --${name} is required (usage: egress-relay --dir DIR --port PORT --netns NAME)`);
  return value;
}

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** Everything the client sends until its first bytes name a host (or cannot), paused afterwards. */
function firstBytes(client: net.Socket): Promise<{ head: Buffer; name: string | undefined; protocol?: string }> {
  return new Promise((resolve) => {
    let head = Buffer.alloc(0);
    let settled = false;
    const done = (name: string | undefined, protocol?: string) => {
      if (settled) return;
      settled = true;
      client.off('data', onData);
      client.pause();
      clearTimeout(timer);
      resolve({ head, name, protocol });
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const r = nameInFirstBytes(head);
      if (r.complete) done(r.name, r.protocol);
      else if (head.length >= MAX_FIRST_BYTES) done(undefined);
    };
    const timer = setTimeout(() => done(undefined), FIRST_BYTES_TIMEOUT_MS);
    client.on('data', onData);
    client.once('end', () => done(undefined));
    client.once('close', () => done(undefined));
  });
}

function resolverFor(policy: RelayPolicy): dns.Resolver {
  const r = new dns.Resolver({ timeout: 2000, tries: 2 });
  if (policy.resolvers.length > 0) r.setServers(policy.resolvers);
  return r;
}

async function addressesOf(policy: RelayPolicy, name: string): Promise<string[]> {
  if (net.isIPv4(name)) return [name];
  try {
    return await resolverFor(policy).resolve4(name);
  } catch {
    return [];
  }
}

async function upstreamFor(policy: RelayPolicy, host: string, port: number): Promise<net.Socket> {
  const proxy = policy.proxy;
  if (proxy) {
    const address = (await addressesOf(policy, proxy.host))[0];
    if (address === undefined) throw new Error(`the egress proxy's host ${proxy.host} does not resolve`);
    const refused = plan({ ...policy, allowOut: [], denyOut: [], allowDomains: [] }, { address, port: proxy.port }, undefined);
    if (refused.action === 'refuse') throw new Error(`the egress proxy ${proxy.host} is at ${address}: private space is never reached`);
    return connectThrough(proxy, address, host, port, CONNECT_TIMEOUT_MS);
  }
  const socket = net.connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => socket.destroy(new Error(`connect to ${host}:${port} timed out`)), CONNECT_TIMEOUT_MS);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  return socket;
}

/** Logs the way original destinations are read when it is the first or it changes (auto), and why a read failed. */
function lookupLogger(): { used(lookup: Lookup): void; failed(err: Error): void } {
  let last: Lookup | undefined;
  let lastError: string | undefined;
  return {
    used(lookup) {
      if (lookup !== last) log(`original destinations from ${lookup === 'procfs' ? 'procfs' : 'netlink (the conntrack tool)'}`);
      last = lookup;
    },
    failed(err) {
      if (err.message !== lastError) log(`cannot read original destinations: ${err.message}`);
      lastError = err.message;
    },
  };
}

async function handle(
  client: net.Socket,
  dir: string,
  relayPort: number,
  choice: LookupChoice,
  lookups: ReturnType<typeof lookupLogger>,
): Promise<void> {
  client.on('error', () => client.destroy());
  const source: Endpoint = { address: (client.remoteAddress ?? '').replace(/^::ffff:/, ''), port: client.remotePort ?? 0 };
  const refuse = (reason: string) => {
    log(`refused ${source.address}:${source.port}: ${reason}`);
    if (!client.destroyed) client.resetAndDestroy();
  };
  const policy = readRelayPolicy(dir, source.address);
  if (!policy) return refuse('no egress policy for this address');
  const destination = await originalDestination(source, relayPort, choice).then(
    (r) => {
      lookups.used(r.lookup);
      return r.destination;
    },
    (err: Error) => {
      lookups.failed(err);
      return undefined;
    },
  );
  if (!destination) return refuse('its original destination is not tracked');
  // A sandbox with transforms: its HTTPS is judged by SNI too, for the rule set of the name.
  const transforms = policy.transforms && destination.port === TRANSFORM_PORT ? policy.transforms : undefined;
  const { head, name, protocol } =
    needsName(policy, destination) || transforms
      ? await firstBytes(client)
      : { head: Buffer.alloc(0), name: undefined, protocol: undefined };
  const decision = plan(policy, destination, name);
  if (decision.action === 'refuse') return refuse(decision.reason);
  if (decision.verifyName !== undefined && !(await addressesOf(policy, decision.verifyName)).includes(destination.address)) {
    return refuse(`${destination.address} is not an address of ${decision.verifyName} (the name it sent)`);
  }
  const set = transforms && protocol === 'tls' && name !== undefined ? rulesFor(transforms.rules, name) : undefined;
  if (transforms && set) {
    // Rules never grant access: the decision above was made first. The destination must prove the name (verified TLS).
    const host = name!.toLowerCase();
    await interceptTls(
      client,
      head,
      host,
      set,
      transforms,
      () => upstreamFor(policy, decision.host, decision.port),
      (reason) => log(`transform ${source.address}:${source.port}: ${reason}`),
    ).catch((err: Error) => refuse(`transform of ${host}: ${err.message}`));
    return;
  }
  let upstream: net.Socket;
  try {
    upstream = await upstreamFor(policy, decision.host, decision.port);
  } catch (err) {
    return refuse(`${decision.host}:${decision.port}: ${(err as Error).message}`);
  }
  if (client.destroyed) {
    upstream.destroy();
    return;
  }
  tieAnswers(client, upstream);
  if (decision.byName !== undefined && protocol === 'http') {
    // Admitted for the Host of its first request: a later request on the same connection must name an allowed host
    // too (one server may host many names at this address).
    passCheckingHosts(client, upstream, head, policy.allowDomains, (reason) => refuse(`${decision.byName} connection: ${reason}`));
    return;
  }
  if (head.length > 0) upstream.write(head);
  client.pipe(upstream);
}

/**
 * Passes a plain HTTP/1 client's requests on while each names an allowed host; at the first that does not (or
 * bytes it cannot follow as HTTP/1 requests) it stops, passing nothing of that request, and closes both sides.
 */
function passCheckingHosts(
  client: net.Socket,
  upstream: net.Socket,
  head: Buffer,
  allowDomains: readonly string[],
  refuse: (reason: string) => void,
): void {
  const splitter = new RequestSplitter();
  const feed = (chunk: Buffer): boolean => {
    const { pieces, error } = splitter.push(chunk);
    for (const piece of pieces) {
      const host = piece.request?.host;
      if (piece.request && (host === null || !matchesDomain(allowDomains, host as string))) {
        upstream.destroy();
        refuse(`a request for ${host === null ? 'no host' : host} (${piece.request.method}) is not allowed`);
        return false;
      }
      if (!upstream.write(piece.bytes)) client.pause();
    }
    if (error !== undefined) {
      upstream.destroy();
      refuse(`its requests cannot be followed: ${error}`);
      return false;
    }
    return true;
  };
  upstream.on('drain', () => client.resume());
  client.on('end', () => upstream.end());
  if (head.length > 0 && !feed(head)) return;
  const onData = (chunk: Buffer) => {
    if (!feed(chunk)) client.off('data', onData);
  };
  client.on('data', onData);
  client.resume();
}

export function main(argv: string[]): void {
  const dir = option(argv, 'dir');
  const port = Number(option(argv, 'port'));
  const netns = option(argv, 'netns');
  const choice = option(argv, 'original-destination', 'auto');
  if (!isLookupChoice(choice))
    throw new Error(`egress-relay: --original-destination is one of ${LOOKUP_CHOICES.join(', ')}, not ${choice}`);
  const lookups = lookupLogger();
  const server = net.createServer({ pauseOnConnect: false }, (client) => {
    handle(client, dir, port, choice, lookups).catch((err: Error) => {
      log(`error: ${err.message}`);
      client.destroy();
    });
  });
  server.listen(port, '0.0.0.0', () => process.stdout.write('ready\n'));
  setInterval(() => {
    if (!existsSync(`/run/netns/${netns}`)) process.exit(0);
  }, 2000).unref();
  server.on('error', (err) => {
    log(`cannot listen on ${port}: ${err.message}`);
    process.exit(1);
  });
}

if (require.main === module) main(process.argv.slice(2));
