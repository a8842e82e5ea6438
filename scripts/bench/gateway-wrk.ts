/** Runs wrk against one URL and reads its summary; wrk is C, so the load generator costs little CPU. */
import { execFile } from 'node:child_process';

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx responses plus socket errors: any is a failed run. */
  failures: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(text: string): number {
  const m = /^([0-9.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) throw new Error(`wrk: cannot read the duration ${JSON.stringify(text)}`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

/** Reads wrk's `--latency` report. */
export function parseWrkOutput(out: string): LoadResult {
  const rps = /Requests\/sec:\s+([0-9.]+)/.exec(out);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out);
  const p99 = /^\s+99%\s+(\S+)/m.exec(out);
  const total = /([0-9]+) requests in/.exec(out);
  if (!rps || !p50 || !p99 || !total) throw new Error(`wrk: unexpected output:\n${out}`);
  const non2xx = /Non-2xx or 3xx responses:\s+([0-9]+)/.exec(out);
  const socketErrors = /Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)/.exec(out);
  const errors = socketErrors ? socketErrors.slice(1).reduce((n, v) => n + Number(v), 0) : 0;
  return {
    rps: Number(rps[1]),
    p50Ms: durationMs(p50[1]),
    p99Ms: durationMs(p99[1]),
    requests: Number(total[1]),
    failures: (non2xx ? Number(non2xx[1]) : 0) + errors,
  };
}

export function runWrk(url: string, script: string, connections: number, seconds: number, threads: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'wrk',
      ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--latency', '-s', script, url],
      { timeout: (seconds + 30) * 1000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
        try {
          resolve(parseWrkOutput(stdout));
        } catch (e) {
          reject(e);
        }
      },
    );
  });
}
