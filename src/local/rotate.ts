/**
 * `sandbox-kit rotate`: gives the proxy a new egress address (the lab's Elastic IP re-pointed, as re-associating an
 * Elastic IP does after `pulumi up` with a bumped egress.generation) while a probe in a sandbox keeps using the
 * proxy, and reports how long until the new address was seen and how many probe requests failed. Sandboxes, their
 * config and the ingress address do not change.
 */
import { attachLab } from '../lab';
import { egressCurl } from './egress-command';
import { sleep } from '../util/poll';
import { type EgressProbe, startEgressProbe, startSandboxProbe } from './egress-probe';
import { sandboxTarget } from './gateway-checks';
import { proxyFactsFileOf } from './platform-sandboxes';
import { writeProxyFacts } from '../platform/dashboard/proxy-facts';
import { readLocalState, readSandboxTokens } from './state';

export interface RotationReport {
  oldEgressIp: string;
  newEgressIp: string;
  secondsToNewAddress: number;
  probes: { sent: number; failed: number };
}

export interface RotateOptions {
  /** The new public address (default: the next free one). */
  to?: string;
  stateBase?: string;
  /** How long the probe keeps going after the new address was seen (default 2 s). */
  settleMs?: number;
  onProgress?: (message: string) => void;
}

export async function rotateEgress(name: string, options: RotateOptions = {}): Promise<RotationReport> {
  const state = readLocalState(name, options.stateBase);
  if (!state?.readyAt) throw new Error(`the local system ${name} is not up; start it with 'sandbox-kit up'`);
  const say = options.onProgress ?? (() => undefined);
  const lab = attachLab(name);
  const oldEgressIp = lab.egressEip;
  const first = state.sandboxes[0]!;
  const where = first.node || first.sandboxID;

  let probe: EgressProbe;
  if (state.platform) {
    // A platform sandbox runs the probe itself, started through the gateway like any workload.
    const token = readSandboxTokens(state).get(first.sandboxID)!;
    probe = startSandboxProbe(sandboxTarget(state.gateway!.url, first, token), egressCurl(lab));
  } else {
    probe = startEgressProbe(lab, first.node);
  }
  try {
    await probe.waitFor(oldEgressIp, 0, 15_000);
    say(`probe in ${where} sees ${oldEgressIp} through the proxy; re-pointing the egress address`);
    const switchedAt = probe.now();
    const moved = await lab.repointEgress(options.to);
    say(`egress Elastic IP moved from ${moved.from} to ${moved.to}`);
    const seen = await probe.waitFor(moved.to, switchedAt, 30_000);
    const secondsToNewAddress = Math.round((seen.at - switchedAt) / 100) / 10;
    say(`the probe saw ${moved.to} after ${secondsToNewAddress.toFixed(1)} s`);
    await sleep(options.settleMs ?? 2_000);
    const probes = await probe.stop();
    if (state.platform)
      writeProxyFacts(proxyFactsFileOf(state), { ingress: lab.ingressEip, egress: moved.to, rotatedAt: new Date().toISOString() });
    return { oldEgressIp, newEgressIp: moved.to, secondsToNewAddress, probes };
  } finally {
    await probe.stop();
  }
}
