/**
 * The agent's idle memory: the bundled agent started as a sandbox runs it (`node run.js agent` with the runtime's V8
 * flags), each in a memory cgroup of its own, and what that cgroup is charged once the agent listens and has been
 * idle for a moment (what a sandbox's memory limit and the host's per-sandbox memory count). The peer in the same run
 * is the floor: the same node with the same flags serving one empty HTTP port. Rounds alternate the two; the medians
 * and their ratio are printed.
 *
 *   node dist/scripts/bench/agent-idle.js [--rounds 5] [--json FILE]
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { agentNodeFlags } from '../../src/runtime/agent-payload';

const BUNDLE_RUN = path.resolve(__dirname, '..', '..', 'bundle', 'run.js');
const MiB = 1024 * 1024;
const FLOOR = "require('node:http').createServer((q, s) => s.end()).listen(0, '127.0.0.1', () => console.log('listening on 127.0.0.1:0'))";
const V2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');
const CG_ROOT = V2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory';
const CHARGE = V2 ? 'memory.current' : 'memory.usage_in_bytes';

interface Sample {
  chargeMiB: number;
  rssMiB: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Starts argv in a fresh memory cgroup, waits for "listening", lets it idle, reads the charge, stops it. */
async function measure(name: string, argv: string[]): Promise<Sample> {
  const cg = path.join(CG_ROOT, `sk-bench-idle-${process.pid}-${name}`);
  fs.mkdirSync(cg);
  try {
    // The shell joins the cgroup, then becomes the program, so everything it allocates is charged there.
    const child = spawn('/bin/sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec "$@"`, 'sh', ...argv], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: os.tmpdir(), T: 'bench-token' },
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (/listening on/.test(out)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
      });
      await new Promise((r) => setTimeout(r, 2000));
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return {
        chargeMiB: Number(fs.readFileSync(path.join(cg, CHARGE), 'utf8')) / MiB,
        rssMiB: Number(rss?.[1] ?? 0) / 1024,
      };
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
    }
  } finally {
    for (let i = 0; i < 50; i++) {
      try {
        fs.rmdirSync(cg);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, json: { type: 'string' } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: got ${values.rounds}; expected a whole number from 1`);
  if (process.getuid?.() !== 0) throw new Error('agent-idle: run as root (it makes memory cgroups)');
  const flags = agentNodeFlags();
  const agent: Sample[] = [];
  const floor: Sample[] = [];
  for (let r = 0; r < rounds; r++) {
    agent.push(
      await measure('agent', [process.execPath, ...flags, BUNDLE_RUN, 'agent', '--host', '127.0.0.1', '--port', '0', '--token-env', 'T']),
    );
    floor.push(await measure('floor', [process.execPath, ...flags, '-e', FLOOR]));
  }
  const result = {
    rounds,
    agent: { chargeMiB: median(agent.map((s) => s.chargeMiB)), rssMiB: median(agent.map((s) => s.rssMiB)) },
    floor: { chargeMiB: median(floor.map((s) => s.chargeMiB)), rssMiB: median(floor.map((s) => s.rssMiB)) },
  };
  const ratio = result.agent.chargeMiB / result.floor.chargeMiB;
  console.log(
    `agent-idle: agent ${result.agent.chargeMiB.toFixed(1)} MiB charged (RSS ${result.agent.rssMiB.toFixed(1)}), ` +
      `floor ${result.floor.chargeMiB.toFixed(1)} MiB (RSS ${result.floor.rssMiB.toFixed(1)}): ${ratio.toFixed(2)}x the floor, median of ${rounds}`,
  );
  if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ ...result, ratio }, null, 2)}\n`);
}

main().catch((err: Error) => {
  console.error(`agent-idle: ${err.message}`);
  process.exit(1);
});
