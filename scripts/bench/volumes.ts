/**
 * Volume throughput on the real runtime: one platform, one volume mounted at /data in one sandbox. Each sample
 * writes a file of --mib MiB with `dd ... conv=fsync` and reads it back with `dd iflag=direct` (past the page cache),
 * once inside the sandbox through the mount and once on the host in a plain directory of the data root, the file
 * system the volume's disk image lives on (the peer: no container, no bind mount, no loop device). MB/s medians and
 * the ratio sandbox / host.
 *
 *   node dist/scripts/bench/volumes.js [--samples 5] [--mib 200]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { startPlatformOnHost } from '../../src/platform/on-host';

async function call(url: string, key: string, method: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** dd's "copied, S s, R MB/s" line: bytes per second from its byte count and seconds. */
function ddRate(output: string): number {
  const m = /(\d+) bytes .* copied, ([\d.]+) s/.exec(output);
  if (!m) throw new Error(`dd printed no rate: ${output.trim()}`);
  return Number(m[1]) / Number(m[2]) / 1e6;
}

const writeCmd = (file: string, mib: number) => `dd if=/dev/zero of=${file} bs=1M count=${mib} conv=fsync 2>&1`;
const readCmd = (file: string) => `dd if=${file} of=/dev/null bs=1M iflag=direct 2>&1`;

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { samples: { type: 'string', default: '5' }, mib: { type: 'string', default: '200' } } });
  const samples = Number(values.samples);
  const mib = Number(values.mib);
  const stateDir = mkdtempSync(path.join(tmpdir(), 'bench-volumes-'));
  const platform = await startPlatformOnHost({ stateDir });
  let sandboxID: string | undefined;
  let volumeID: string | undefined;
  try {
    const { url, apiKey: key } = platform;
    const vol = await call(`${url}/volumes`, key, 'POST', { name: 'bench' });
    if (vol.status !== 201) throw new Error(`volume create answered ${vol.status}: ${JSON.stringify(vol.body)}`);
    volumeID = (vol.body as { volumeID: string }).volumeID;
    const made = await call(`${url}/v2/sandboxes`, key, 'POST', {
      templateID: 'base',
      timeout: 3600,
      volumeMounts: [{ name: 'bench', path: '/data' }],
    });
    if (made.status !== 201) throw new Error(`create answered ${made.status}: ${JSON.stringify(made.body)}`);
    sandboxID = (made.body as { sandboxID: string }).sandboxID;
    const record = await platform.sandboxes.get(sandboxID);
    const agent = platform.sandboxes.agentFor(record);
    const inSandbox = async (cmd: string) => {
      const r = await agent.run(record.envdAccessToken, cmd, { user: 'user', timeoutMs: 300_000 });
      if (r.exitCode !== 0) throw new Error(`${cmd} failed in the sandbox: ${r.outputTail}`);
      return r.outputTail;
    };
    const onHost = (cmd: string) => execFileSync('sh', ['-c', cmd], { encoding: 'utf8' });
    const image = `${path.join(stateDir, 'volumes', volumeID)}.disk`;
    const hostDir = path.join(stateDir, 'peer');
    fs.mkdirSync(hostDir);
    const t = { sandboxWrite: [] as number[], sandboxRead: [] as number[], hostWrite: [] as number[], hostRead: [] as number[] };
    for (let i = 0; i < samples; i++) {
      // Alternating who goes first, so neither always meets the other's leftovers.
      const order = i % 2 === 0 ? ['sandbox', 'host'] : ['host', 'sandbox'];
      for (const who of order) {
        if (who === 'sandbox') {
          t.sandboxWrite.push(ddRate(await inSandbox(writeCmd('/data/s.bin', mib))));
          // iflag=direct passes the volume's page cache but not the loop device's: its image's cached pages go too.
          if (fs.existsSync(image)) onHost(`dd if=${image} iflag=nocache count=0 2>&1`);
          t.sandboxRead.push(ddRate(await inSandbox(readCmd('/data/s.bin'))));
          await inSandbox('rm /data/s.bin');
        } else {
          t.hostWrite.push(ddRate(onHost(writeCmd(path.join(hostDir, 'h.bin'), mib))));
          t.hostRead.push(ddRate(onHost(readCmd(path.join(hostDir, 'h.bin')))));
          fs.rmSync(path.join(hostDir, 'h.bin'));
        }
      }
    }
    console.log(`volumes: ${samples} samples, ${mib} MiB written (dd conv=fsync) and read back (iflag=direct), MB/s medians`);
    const row = (what: string, sandbox: number[], host: number[]) =>
      console.log(
        `${what.padEnd(6)} sandbox via volume ${median(sandbox).toFixed(0).padStart(6)}  host, data root ${median(host).toFixed(0).padStart(6)}  ratio ${(median(sandbox) / median(host)).toFixed(2)}x`,
      );
    row('write', t.sandboxWrite, t.hostWrite);
    row('read', t.sandboxRead, t.hostRead);
    return 0;
  } finally {
    if (sandboxID) await platform.sandboxes.kill(sandboxID).catch(() => {});
    if (volumeID) await call(`${platform.url}/volumes/${volumeID}`, platform.apiKey, 'DELETE').catch(() => {});
    await platform.close({ killSandboxes: true });
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`volumes: ${err.message}`);
    process.exit(1);
  },
);
