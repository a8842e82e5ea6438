/**
 * A probe inside a sandbox that keeps asking the internet's what-is-my-IP service for the address it sees, through
 * the proxy, several times a second: what a workload using the proxy experiences while the egress address changes.
 */
import type { Lab } from '../lab';
import { curlArgv, whoamiUrl } from '../lab/egress-check';
import { sleep } from '../util/poll';

export interface ProbeAnswer {
  /** ms since the probe started. */
  at: number;
  /** The address the service saw, or undefined when the request failed. */
  address?: string;
  error?: string;
}

export interface EgressProbe {
  readonly answers: readonly ProbeAnswer[];
  /** Resolves to the first answer (after `since`, ms since start) showing `address`. */
  waitFor(address: string, since: number, timeoutMs: number): Promise<ProbeAnswer>;
  /** ms since the probe started. */
  now(): number;
  stop(): Promise<{ sent: number; failed: number }>;
}

export function startEgressProbe(lab: Lab, node: string, intervalMs = 200): EgressProbe {
  const url = whoamiUrl(lab.plan.web, lab.plan.webHttpPort);
  const argv = lab.mode === 'local' ? curlArgv(url, `127.0.0.1:${lab.socksPort}`) : curlArgv(url);
  const started = Date.now();
  const answers: ProbeAnswer[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const begin = Date.now();
      const result = await lab.exec(node, argv);
      const at = Date.now() - started;
      answers.push(
        result.code === 0 ? { at, address: result.stdout.trim() } : { at, error: result.stderr.trim() || `exit ${result.code}` },
      );
      await sleep(Math.max(0, intervalMs - (Date.now() - begin)));
    }
  })();
  return {
    answers,
    now: () => Date.now() - started,
    async waitFor(address, since, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = answers.find((a) => a.at >= since && a.address === address);
        if (hit) return hit;
        if (Date.now() > deadline) {
          const last = answers.at(-1);
          throw new Error(
            `the probe in ${node} did not see ${address} within ${timeoutMs / 1000} s (last answer: ${last?.address ?? last?.error ?? 'none'})`,
          );
        }
        await sleep(50);
      }
    },
    async stop() {
      running = false;
      await loop;
      return { sent: answers.length, failed: answers.filter((a) => a.address === undefined).length };
    },
  };
}
