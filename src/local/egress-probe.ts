/**
 * A probe inside a sandbox that keeps asking the internet's what-is-my-IP service for the address it sees, through
 * the proxy, several times a second: what a workload using the proxy experiences while the egress address changes.
 */
import type { Lab } from '../lab';
import { curlArgv, whoamiUrl } from '../lab/egress-check';
import { sleep } from '../util/poll';
import { type SandboxTarget, streamCommand } from './gateway-checks';

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

/** The answers so far, as an EgressProbe; `finish` ends the source and resolves once it has. */
function probeOver(answers: ProbeAnswer[], started: number, where: string, finish: () => Promise<void>): EgressProbe {
  let finished: Promise<void> | undefined;
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
            `the probe in ${where} did not see ${address} within ${timeoutMs / 1000} s (last answer: ${last?.address ?? last?.error ?? 'none'})`,
          );
        }
        await sleep(50);
      }
    },
    async stop() {
      finished ??= finish();
      await finished;
      return { sent: answers.length, failed: answers.filter((a) => a.address === undefined).length };
    },
  };
}

const ADDRESS = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * The probe as a process inside a platform sandbox, started through the gateway like any workload: a shell loop of
 * curl through the proxy, one line per request, streamed back as it runs. It ends itself after `maxSeconds`.
 */
export function startSandboxProbe(target: SandboxTarget, curl: string, intervalMs = 200, maxSeconds = 120): EgressProbe {
  const started = Date.now();
  const answers: ProbeAnswer[] = [];
  const stopFile = `/tmp/sandbox-kit-probe-${Date.now()}`;
  const script = `end=$(($(date +%s) + ${maxSeconds})); while [ ! -e ${stopFile} ] && [ $(date +%s) -lt $end ]; do echo "$(${curl} 2>&1 | tr '\n' ' ')"; sleep ${intervalMs / 1000}; done`;
  let pending = '';
  const run = streamCommand(
    target,
    script,
    (chunk) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      const at = Date.now() - started;
      for (const line of lines)
        answers.push(ADDRESS.test(line.trim()) ? { at, address: line.trim() } : { at, error: line.trim() || 'no answer' });
    },
    (maxSeconds + 30) * 1000,
  ).catch((err: Error) => {
    answers.push({ at: Date.now() - started, error: `the probe's stream ended: ${err.message}` });
    return -1;
  });
  return probeOver(answers, started, `sandbox ${target.sandboxID}`, async () => {
    await streamCommand(target, `touch ${stopFile}`, () => undefined).catch(() => -1);
    await run;
  });
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
  return probeOver(answers, started, node, async () => {
    running = false;
    await loop;
  });
}
