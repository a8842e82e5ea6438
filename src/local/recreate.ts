/**
 * `sandbox-kit rotate --recreate`: the destroy-and-recreate path, as bumping host.generation does on AWS. The proxy
 * host is replaced (new ingress address, new password), so the template, which carries the client config, is rebuilt,
 * and the sandboxes are recreated from it. Reports the downtime: from the old proxy's end until every new sandbox
 * leaves through the proxy again.
 */
import { attachLab, type ProgressFn } from '../lab';
import { egressCurl } from './egress-command';
import { runCommand, sandboxTarget } from './gateway-checks';
import { readProxyFacts, writeProxyFacts } from '../platform/dashboard/proxy-facts';
import { apiKeyOf, buildTemplate, createSandboxes, proxyFactsFileOf } from './platform-sandboxes';
import { readLocalState, writeLocalState, writeSandboxTokens } from './state';

export interface RecreateReport {
  oldIngressIp: string;
  newIngressIp: string;
  egressIp: string;
  downtimeSeconds: number;
  sandboxes: { before: string[]; after: string[] };
}

export async function recreateProxy(name: string, options: { stateBase?: string; onProgress?: ProgressFn } = {}): Promise<RecreateReport> {
  const state = readLocalState(name, options.stateBase);
  if (!state?.readyAt) throw new Error(`the local system ${name} is not up; start it with 'sandbox-kit up'`);
  if (!state.platform)
    throw new Error(
      'rotate --recreate rebuilds the template and recreates the sandboxes: it needs the platform (up --sandboxes-from platform)',
    );
  const progress = options.onProgress ?? (() => undefined);
  const before = state.sandboxes.map((s) => s.sandboxID);
  const started = Date.now();

  const moved = await attachLab(name).recreateProxyHost();
  progress({ step: 'recreate', message: `new proxy host: ingress ${moved.oldIngress} -> ${moved.newIngress}, new password` });
  const lab = attachLab(name);
  // Before anything is created: the platform pins the proxy template's sandboxes to the ingress these facts name.
  const facts = readProxyFacts(proxyFactsFileOf(state));
  writeProxyFacts(proxyFactsFileOf(state), {
    ingress: moved.newIngress,
    egress: lab.egressEip,
    rotatedAt: 'problem' in facts ? null : facts.rotatedAt,
  });
  await buildTemplate(state, lab, state.config, progress);
  const apiKey = apiKeyOf(state);
  for (const id of before) {
    await fetch(`${state.platform.url}/sandboxes/${id}`, { method: 'DELETE', headers: { 'x-api-key': apiKey } });
    progress({ step: 'recreate', message: `killed ${id}` });
  }
  state.sandboxes = [];
  const tokens = await createSandboxes(state, before.length, state.config, progress);
  writeSandboxTokens(state, tokens);
  writeLocalState(state);

  for (const s of state.sandboxes) {
    const target = sandboxTarget(state.gateway!.url, s, tokens.get(s.sandboxID)!);
    const seen = (await runCommand(target, egressCurl(lab))).stdout.trim();
    if (seen !== lab.egressEip)
      throw new Error(
        `recreated sandbox ${s.sandboxID} does not leave through the proxy: it shows ${seen || 'nothing'}, expected ${lab.egressEip}`,
      );
    progress({ step: 'recreate', message: `${s.sandboxID}: curl through the new proxy shows ${seen}` });
  }
  const downtimeSeconds = Math.round((Date.now() - started) / 100) / 10;
  return {
    oldIngressIp: moved.oldIngress,
    newIngressIp: moved.newIngress,
    egressIp: lab.egressEip,
    downtimeSeconds,
    sandboxes: { before, after: state.sandboxes.map((s) => s.sandboxID) },
  };
}
