/**
 * What egress rules cost. Part 1, the create path: the network step of a create (attach to the sandbox network and
 * load the sandbox's egress policy) for N sandboxes each holding R rules (half allow, half deny) against N sandboxes
 * with none, in the same run, on fresh standalone networks: p50 of each and the ratio. Part 2, throughput: a TCP
 * stream from a sandbox's namespace through the bridge namespace to a sink behind it, for a sandbox with R rules and
 * one with none (the guard applies to both: this is the cost of the policy path), median of the rounds, and the ratio.
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

/** R rules that match nothing the benchmark talks to: the cost of walking them, not of refusing. */
function policy(rules: number): EgressPolicy | undefined {
  if (rules === 0) return undefined;
  const cidr = (i: number) => `198.51.${100 + (i % 100)}.${i % 256}/32`;
  const half = Math.floor(rules / 2);
  return {
    allowOut: Array.from({ length: half }, (_, i) => cidr(i)),
    denyOut: Array.from({ length: rules - half }, (_, i) => cidr(i + 128)),
  };
}

async function createPath(rules: number): Promise<number[]> {
  const net = await createSandboxHostNetwork(`bp${randomBytes(3).toString('hex')}`);
  const took: number[] = [];
  try {
    for (let i = 0; i < N; i++) {
      const id = `s${i}`;
      const t0 = performance.now();
      await net.network.attach(id);
      const p = policy(rules);
      if (p) await net.network.setEgressPolicy?.(id, p);
      took.push(performance.now() - t0);
      if ((i + 1) % 50 === 0) log(`${rules} rules: ${i + 1}/${N} attached`);
    }
  } finally {
    await net.close();
  }
  return took;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

/** Seconds to push MB megabytes from the sandbox's namespace to the sink. */
function stream(netns: string): number {
  const code = `const s=require('net').connect(9000,'${SINK}',()=>{const b=Buffer.alloc(1<<20);let n=${MB};const t=process.hrtime.bigint();const w=()=>{while(n>0){n--;if(!s.write(b)){s.once('drain',w);return}}s.end()};s.on('close',()=>{console.log(Number(process.hrtime.bigint()-t)/1e9)});w()})`;
  return Number(execFileSync('ip', ['netns', 'exec', netns, process.execPath, '-e', code], { encoding: 'utf8' }).trim());
}

async function throughput(): Promise<{ filtered: number; unfiltered: number }> {
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
    await net.network.attach('filtered');
    await net.network.setEgressPolicy?.('filtered', policy(R));
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
    const f: number[] = [];
    const u: number[] = [];
    stream(`${name}-plain`);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['filtered', 'plain'] : ['plain', 'filtered'];
      for (const which of order) (which === 'filtered' ? f : u).push(MB / stream(`${name}-${which}`));
      log(`round ${r + 1}/${ROUNDS}: filtered ${f.at(-1)?.toFixed(0)} MB/s, unfiltered ${u.at(-1)?.toFixed(0)} MB/s`);
    }
    return { filtered: p50(f), unfiltered: p50(u) };
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
  log(`create path: ${N} sandboxes with no rules, then ${N} with ${R} rules each`);
  const none = await createPath(0);
  const withRules = await createPath(R);
  const a = p50(none);
  const b = p50(withRules);
  log(`throughput: ${MB} MB per stream, ${ROUNDS} rounds`);
  const t = await throughput();
  const result = {
    createNetworkStepP50Ms: { none: Number(a.toFixed(1)), withRules: Number(b.toFixed(1)), ratio: Number((b / a).toFixed(3)) },
    throughputMBps: {
      unfiltered: Math.round(t.unfiltered),
      filtered: Math.round(t.filtered),
      ratio: Number((t.filtered / t.unfiltered).toFixed(3)),
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
