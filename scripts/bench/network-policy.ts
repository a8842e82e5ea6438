/**
 * What egress rules cost. Part 1, the create path: the network step of a create (attach to the sandbox network with
 * the sandbox's egress policy, loaded with the attachment's own rules) for N sandboxes each holding R address rules
 * (half allow, half deny), and N each holding R rules of which half are domain names (their TCP goes through the
 * egress relay), against N sandboxes with none, in the same run, on fresh standalone networks: p50 of each and the
 * ratios (the three kinds take turns, sandbox by sandbox). Part 2, throughput: a TCP stream from a sandbox's
 * namespace through the bridge namespace to a sink behind it, for a sandbox with none (the guard applies to all), R
 * address rules, R rules half of them domains (the sink not denied), and every address denied but the sink's name
 * allowed, the stream opening with a TLS ClientHello or an HTTP request head naming it (the egress relay judges it
 * and copies every byte); with --baseline-relay another build of the relay is measured beside the current one, in
 * the same run: median of the rounds, and the ratios to none.
 * Root only; makes one link into the root namespace per network.
 *
 *   node dist/scripts/bench/network-policy.js [--sandboxes 200] [--rules 20] [--megabytes 512] [--rounds 3]
 *     [--throughput-only] [--baseline-relay path/to/egress-relay.js]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createSandboxHostNetwork } from '../../src/runtime/network/host-network';
import { ensureRelay } from '../../src/runtime/network/relay-process';
import type { EgressPolicy } from '../../src/runtime/network/egress-policy';

const { values } = parseArgs({
  options: {
    sandboxes: { type: 'string', default: '200' },
    rules: { type: 'string', default: '20' },
    megabytes: { type: 'string', default: '512' },
    rounds: { type: 'string', default: '3' },
    'throughput-only': { type: 'boolean', default: false },
    'baseline-relay': { type: 'string' },
  },
});
const N = Number(values.sandboxes);
const R = Number(values.rules);
const MB = Number(values.megabytes);
const ROUNDS = Number(values.rounds);
const THROUGHPUT_ONLY = values['throughput-only'];
/** Another build of the egress relay (a bundled egress-relay.js), measured beside the current one in the same run. */
const BASELINE = values['baseline-relay'];
const SINK = '203.0.113.1';

function log(msg: string): void {
  process.stderr.write(`network-policy: ${msg}\n`);
}

function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/**
 * R rules that match nothing the benchmark talks to: the cost of walking them, not of refusing. `domains`: the allow
 * half are domain names, so the sandbox's TCP goes through the egress relay (the sink is not denied: the relay
 * connects without waiting for a name, which is the path every connection of such a sandbox takes).
 */
function policy(rules: number, domains = false): EgressPolicy | undefined {
  if (rules === 0) return undefined;
  const cidr = (i: number) => `198.51.${100 + (i % 100)}.${i % 256}/32`;
  const half = Math.floor(rules / 2);
  const denyOut = Array.from({ length: rules - half }, (_, i) => cidr(i + 128));
  if (domains) return { allowOut: [], allowDomains: Array.from({ length: half }, (_, i) => `host${i}.example.com`), denyOut };
  return { allowOut: Array.from({ length: half }, (_, i) => cidr(i)), denyOut };
}

/**
 * The network step for N sandboxes of each kind (none, R address rules, R rules half of them domains), each kind on a
 * network of its own; the kinds take turns sandbox by sandbox, so a change in the machine's load hits all alike.
 */
async function createPaths(): Promise<{ none: number[]; rules: number[]; domains: number[] }> {
  const kinds = [
    { key: 'none', policy: policy(0) },
    { key: 'rules', policy: policy(R) },
    { key: 'domains', policy: policy(R, true) },
  ] as const;
  const nets: Awaited<ReturnType<typeof createSandboxHostNetwork>>[] = [];
  const took = { none: [] as number[], rules: [] as number[], domains: [] as number[] };
  try {
    for (const _ of kinds) nets.push(await createSandboxHostNetwork(`bp${randomBytes(3).toString('hex')}`));
    for (let i = 0; i < N; i++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(k + i) % kinds.length]!;
        const net = nets[kinds.indexOf(kind)]!;
        const t0 = performance.now();
        await net.network.attach(`s${i}`, kind.policy);
        took[kind.key].push(performance.now() - t0);
      }
      if ((i + 1) % 50 === 0) log(`${i + 1}/${N} sandboxes of each kind attached`);
    }
  } finally {
    for (const net of nets) await net.close();
  }
  return took;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

/** The name the relayed streams send (TLS SNI or HTTP Host): allowed, and resolved to the sink by its resolver. */
const SINK_NAME = 'sink.bench.test';

/** A minimal TLS ClientHello naming `name` (SNI): what a TLS client's first bytes look like to the relay. */
function clientHello(name: string): Buffer {
  const host = Buffer.from(name);
  const sni = Buffer.concat([Buffer.from([0, 0]), u16(host.length + 5), u16(host.length + 3), Buffer.from([0]), u16(host.length), host]);
  const extensions = Buffer.concat([u16(sni.length), sni]);
  const body = Buffer.concat([
    Buffer.from([3, 3]),
    Buffer.alloc(32),
    Buffer.from([0]),
    u16(2),
    Buffer.from([0x13, 0x01]),
    Buffer.from([1, 0]),
    extensions,
  ]);
  const handshake = Buffer.concat([Buffer.from([1, 0]), u16(body.length), body]);
  return Buffer.concat([Buffer.from([0x16, 3, 1]), u16(handshake.length), handshake]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

/**
 * Seconds to push MB megabytes from the sandbox's namespace to `sink` (port 9000), after `first` (the bytes that name
 * the host, or none).
 */
function stream(netns: string, sink: string, first: Buffer): number {
  const code = `const s=require('net').connect(9000,'${sink}',()=>{s.write(Buffer.from('${first.toString('base64')}','base64'));const b=Buffer.alloc(1<<20);let n=${MB};const t=process.hrtime.bigint();const w=()=>{while(n>0){n--;if(!s.write(b)){s.once('drain',w);return}}s.end()};s.on('close',()=>{console.log(Number(process.hrtime.bigint()-t)/1e9)});w()})`;
  return Number(execFileSync('ip', ['netns', 'exec', netns, process.execPath, '-e', code], { encoding: 'utf8' }).trim());
}

/** Seconds to receive MB megabytes in the sandbox's namespace from `sink` (port 9001), which sends once `first` came. */
function download(netns: string, sink: string, first: Buffer): number {
  const opening = first.length > 0 ? first : Buffer.from('\n');
  const code = `const s=require('net').connect(9001,'${sink}',()=>{const t=process.hrtime.bigint();let got=0;s.on('data',(d)=>{got+=d.length});s.on('end',()=>{if(got!==${MB}*1048576)process.exit(1);console.log(Number(process.hrtime.bigint()-t)/1e9)});s.write(Buffer.from('${opening.toString('base64')}','base64'))})`;
  return Number(execFileSync('ip', ['netns', 'exec', netns, process.execPath, '-e', code], { encoding: 'utf8' }).trim());
}

/** A sink namespace behind a fresh standalone network: a TCP sink on 9000 and a resolver naming SINK_NAME, on `sink`. */
async function sinkNetwork(sink: string, relayProgram?: string) {
  const name = `bt${randomBytes(3).toString('hex')}`;
  const net = await createSandboxHostNetwork(name, { dnsResolvers: [sink] });
  const sinkNs = `${name}.sink`;
  const close = async () => {
    server?.kill('SIGKILL');
    await net.close();
    try {
      ip('netns', 'del', sinkNs);
    } catch {
      // already gone
    }
  };
  let server: ReturnType<typeof spawn> | undefined;
  try {
    ip('netns', 'add', sinkNs);
    ip('-n', net.namespace, 'link', 'add', 'inet0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', sinkNs);
    ip('-n', net.namespace, 'addr', 'add', `${sink.replace(/\.\d+$/, '.254')}/24`, 'dev', 'inet0');
    ip('-n', net.namespace, 'link', 'set', 'inet0', 'up');
    ip('-n', sinkNs, 'addr', 'add', `${sink}/24`, 'dev', 'eth0');
    ip('-n', sinkNs, 'link', 'set', 'eth0', 'up');
    ip('-n', sinkNs, 'link', 'set', 'lo', 'up');
    ip('-n', sinkNs, 'route', 'add', net.subnet, 'via', sink.replace(/\.\d+$/, '.254'));
    // The relay resolves the allowed name with the sandbox's resolvers: this one answers every A query with the sink.
    const program = `const net=require('net');net.createServer((s)=>s.resume()).listen(9000,()=>console.log('ready'));
net.createServer((s)=>{s.resume();s.once('data',()=>{const b=Buffer.alloc(1<<20);let n=${MB};const w=()=>{while(n>0){n--;if(!s.write(b)){s.once('drain',w);return}}s.end()};w()})}).listen(9001);
const d=require('dgram').createSocket('udp4');d.on('message',(q,f)=>{let p=12;while(q[p])p+=1+q[p];const h=Buffer.from(q.subarray(0,12));h[2]=0x81;h[3]=0x80;h.writeUInt16BE(1,4);h.writeUInt16BE(1,6);h.writeUInt32BE(0,8);
d.send(Buffer.concat([h,q.subarray(12,p+5),Buffer.from([0xc0,12,0,1,0,1,0,0,0,30,0,4,${sink.split('.').join(',')}])]),f.port,f.address)});d.bind(53,'${sink}');`;
    const started = spawn('ip', ['netns', 'exec', sinkNs, process.execPath, '-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
    server = started;
    await new Promise<void>((resolve) => started.stdout?.once('data', () => resolve()));
    // A relay of another build (the baseline), started before any sandbox needs one: the network then uses it.
    if (relayProgram) await ensureRelay(net.namespace, relayProgram);
    return { name, net, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** What one kind of sandbox is: its policy, the bytes it sends first, and which network (relay build) it is on. */
interface Kind {
  key: string;
  policy: EgressPolicy | undefined;
  first: Buffer;
  baseline?: boolean;
  /** Measured downloading (the server sends) rather than uploading. */
  down?: boolean;
}

/** The name-allowed policy: every address denied, the sink's name allowed; the relay judges every connection. */
const byName: EgressPolicy = { allowOut: [], denyOut: ['0.0.0.0/0'], allowDomains: [SINK_NAME] };
const httpHead = Buffer.from(`POST /upload HTTP/1.1\r\nHost: ${SINK_NAME}\r\nContent-Length: ${MB * 1048576}\r\n\r\n`);

async function throughput(): Promise<Record<string, number>> {
  const kinds: Kind[] = [
    { key: 'unfiltered', policy: undefined, first: Buffer.alloc(0) },
    { key: 'addressRules', policy: policy(R), first: Buffer.alloc(0) },
    // Domain rules, the sink's address not denied: the path every other connection of such a sandbox takes.
    { key: 'domainRulesNotDenied', policy: policy(R, true), first: Buffer.alloc(0) },
    { key: 'relayedTls', policy: byName, first: clientHello(SINK_NAME) },
    { key: 'relayedHttp', policy: byName, first: httpHead },
    { key: 'downUnfiltered', policy: undefined, first: Buffer.alloc(0), down: true },
    { key: 'downRelayedTls', policy: byName, first: clientHello(SINK_NAME), down: true },
    ...(BASELINE
      ? [
          { key: 'baselineRelayedTls', policy: byName, first: clientHello(SINK_NAME), baseline: true },
          { key: 'baselineRelayedHttp', policy: byName, first: httpHead, baseline: true },
          { key: 'baselineDownRelayedTls', policy: byName, first: clientHello(SINK_NAME), baseline: true, down: true },
        ]
      : []),
  ];
  const current = await sinkNetwork(SINK);
  const baseline = BASELINE
    ? await sinkNetwork(SINK, BASELINE).catch(async (err) => (await current.close(), Promise.reject(err)))
    : undefined;
  try {
    for (const k of kinds) await (k.baseline ? baseline! : current).net.network.attach(k.key, k.policy);
    const run = (k: Kind) => (k.down ? download : stream)(`${(k.baseline ? baseline! : current).name}-${k.key}`, SINK, k.first);
    for (const k of kinds) run(k);
    const seen: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k.key, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < kinds.length; i++) {
        const k = kinds[(i + r) % kinds.length]!;
        seen[k.key]!.push(MB / run(k));
      }
      log(`round ${r + 1}/${ROUNDS}: ${kinds.map((k) => `${k.key} ${seen[k.key]!.at(-1)!.toFixed(0)}`).join(', ')} MB/s`);
    }
    return Object.fromEntries(kinds.map((k) => [k.key, p50(seen[k.key]!)]));
  } finally {
    await baseline?.close();
    await current.close();
  }
}

async function main(): Promise<void> {
  let create: Record<string, number> | undefined;
  if (!THROUGHPUT_ONLY) {
    log(`create path: ${N} sandboxes each with no rules, ${R} address rules, ${R} rules half of them domains, taking turns`);
    const paths = await createPaths();
    const a = p50(paths.none);
    const b = p50(paths.rules);
    const c = p50(paths.domains);
    create = {
      none: Number(a.toFixed(1)),
      withRules: Number(b.toFixed(1)),
      ratio: Number((b / a).toFixed(3)),
      withDomainRules: Number(c.toFixed(1)),
      domainRatio: Number((c / a).toFixed(3)),
    };
  }
  log(`throughput: ${MB} MB per stream, ${ROUNDS} rounds${BASELINE ? `, baseline relay ${BASELINE}` : ''}`);
  const t = await throughput();
  // Uploads against the unfiltered upload, downloads against the unfiltered download.
  const peer = (k: string) => (/^(baselineD|d)own/.test(k) ? t.downUnfiltered! : t.unfiltered!);
  const result = {
    ...(create ? { createNetworkStepP50Ms: create } : {}),
    throughputMBps: Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)])),
    throughputRatioToUnfiltered: Object.fromEntries(
      Object.entries(t)
        .filter(([k]) => k !== 'unfiltered' && k !== 'downUnfiltered')
        .map(([k, v]) => [k, Number((v / peer(k)).toFixed(3))]),
    ),
    sandboxes: N,
    rules: R,
  };
  console.log(JSON.stringify(result, null, 2));
}

main().catch((err: Error) => {
  log(err.stack ?? err.message);
  process.exit(1);
});
