/**
 * What egress rules cost. Part 1, the create path: the network step of a create (attach to the sandbox network with
 * the sandbox's egress policy, loaded with the attachment's own rules) for N sandboxes each holding R address rules
 * (half allow, half deny), and N each holding R rules of which half are domain names (their TCP goes through the
 * egress relay), against N sandboxes with none, in the same run, on fresh standalone networks: p50 of each and the
 * ratios (the three kinds take turns, sandbox by sandbox). Part 2, throughput: a TCP stream from a sandbox's namespace through the bridge namespace to a sink behind
 * it, for a sandbox with R address rules, one with domain rules (through the relay) and one with none (the guard
 * applies to all: this is the cost of each policy path), median of the rounds, and the ratios.
 * Root only; makes one link into the root namespace per network.
 *
 *   node dist/scripts/bench/network-policy.js [--sandboxes 200] [--rules 20] [--megabytes 512] [--rounds 3]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createSandboxHostNetwork } from '../../src/runtime/network/host-network';
import type { EgressPolicy } from '../../src/runtime/network/egress-policy';

const { values } = parseArgs({
  options: {
    sandboxes: { type: 'string', default: '200' },
    rules: { type: 'string', default: '20' },
    megabytes: { type: 'string', default: '512' },
    rounds: { type: 'string', default: '3' },
  },
});
const N = Number(values.sandboxes);
const R = Number(values.rules);
const MB = Number(values.megabytes);
const ROUNDS = Number(values.rounds);
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

/** Seconds to push MB megabytes from the sandbox's namespace to the sink. */
function stream(netns: string): number {
  const code = `const s=require('net').connect(9000,'${SINK}',()=>{const b=Buffer.alloc(1<<20);let n=${MB};const t=process.hrtime.bigint();const w=()=>{while(n>0){n--;if(!s.write(b)){s.once('drain',w);return}}s.end()};s.on('close',()=>{console.log(Number(process.hrtime.bigint()-t)/1e9)});w()})`;
  return Number(execFileSync('ip', ['netns', 'exec', netns, process.execPath, '-e', code], { encoding: 'utf8' }).trim());
}

async function throughput(): Promise<{ filtered: number; relayed: number; unfiltered: number }> {
  const name = `bt${randomBytes(3).toString('hex')}`;
  const net = await createSandboxHostNetwork(name);
  const sinkNs = `${name}.sink`;
  let sink: ReturnType<typeof spawn> | undefined;
  try {
    ip('netns', 'add', sinkNs);
    ip('-n', net.namespace, 'link', 'add', 'inet0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', sinkNs);
    ip('-n', net.namespace, 'addr', 'add', '203.0.113.254/24', 'dev', 'inet0');
    ip('-n', net.namespace, 'link', 'set', 'inet0', 'up');
    ip('-n', sinkNs, 'addr', 'add', `${SINK}/24`, 'dev', 'eth0');
    ip('-n', sinkNs, 'link', 'set', 'eth0', 'up');
    ip('-n', sinkNs, 'link', 'set', 'lo', 'up');
    ip('-n', sinkNs, 'route', 'add', net.subnet, 'via', '203.0.113.254');
    await net.network.attach('filtered', policy(R));
    await net.network.attach('relayed', policy(R, true));
    await net.network.attach('plain');
    const started = spawn(
      'ip',
      [
        'netns',
        'exec',
        sinkNs,
        process.execPath,
        '-e',
        "require('net').createServer((s)=>s.resume()).listen(9000,()=>console.log('ready'))",
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    sink = started;
    await new Promise<void>((resolve) => started.stdout?.once('data', () => resolve()));
    const seen: Record<string, number[]> = { filtered: [], relayed: [], plain: [] };
    stream(`${name}-plain`);
    stream(`${name}-relayed`);
    for (let r = 0; r < ROUNDS; r++) {
      const order = ['filtered', 'relayed', 'plain'];
      for (let k = 0; k < order.length; k++) {
        const which = order[(k + r) % order.length]!;
        seen[which]!.push(MB / stream(`${name}-${which}`));
      }
      const last = (w: string) => seen[w]!.at(-1)?.toFixed(0);
      log(`round ${r + 1}/${ROUNDS}: filtered ${last('filtered')} MB/s, relayed ${last('relayed')} MB/s, unfiltered ${last('plain')} MB/s`);
    }
    return { filtered: p50(seen.filtered!), relayed: p50(seen.relayed!), unfiltered: p50(seen.plain!) };
  } finally {
    sink?.kill('SIGKILL');
    await net.close();
    try {
      ip('netns', 'del', sinkNs);
    } catch {
      // already gone
    }
  }
}

async function main(): Promise<void> {
  log(`create path: ${N} sandboxes each with no rules, ${R} address rules, ${R} rules half of them domains, taking turns`);
  const paths = await createPaths();
  const a = p50(paths.none);
  const b = p50(paths.rules);
  const c = p50(paths.domains);
  log(`throughput: ${MB} MB per stream, ${ROUNDS} rounds`);
  const t = await throughput();
  const result = {
    createNetworkStepP50Ms: {
      none: Number(a.toFixed(1)),
      withRules: Number(b.toFixed(1)),
      ratio: Number((b / a).toFixed(3)),
      withDomainRules: Number(c.toFixed(1)),
      domainRatio: Number((c / a).toFixed(3)),
    },
    throughputMBps: {
      unfiltered: Math.round(t.unfiltered),
      filtered: Math.round(t.filtered),
      ratio: Number((t.filtered / t.unfiltered).toFixed(3)),
      relayed: Math.round(t.relayed),
      relayedRatio: Number((t.relayed / t.unfiltered).toFixed(3)),
    },
    sandboxes: N,
    rules: R,
  };
  console.log(JSON.stringify(result, null, 2));
}

main().catch((err: Error) => {
  log(err.stack ?? err.message);
  process.exit(1);
});
