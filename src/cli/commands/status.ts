/** `sandbox-kit status [--json]`: what of the local system is running and healthy. Exit 0 healthy, 1 otherwise. */
import { localStatus } from '../../local';
import { parseFlags, switchFlag } from '../args';
import { labNameFlag } from '../lab-flags';

const HELP = `usage: sandbox-kit status [--name NAME] [--json]

What of the local system (sandbox-kit up) is running and healthy, probed now: the proxy host (namespaces, processes,
ss-server), the gateway, and each sandbox's agent through the gateway. Exit 0 when all is healthy, 1 otherwise.`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('status', argv, { name: labNameFlag('local'), json: switchFlag() });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const s = await localStatus(values.name);
  if (values.json) {
    console.log(JSON.stringify(s));
    return s.healthy ? 0 : 1;
  }
  if (!s.up) {
    console.log(`the local system ${s.name} is not up (start it with 'sandbox-kit up')`);
    return 1;
  }
  const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');
  console.log(
    `local system ${s.name} (${s.mode} mode${s.readyAt ? `, up since ${s.readyAt}` : ''}): ${s.healthy ? 'healthy' : 'NOT healthy'}`,
  );
  if (s.proxy)
    console.log(`  ${mark(s.proxy.healthy)} proxy     ingress ${s.proxy.ingressIp}, egress ${s.proxy.egressIp}; ${s.proxy.detail}`);
  if (s.platform) console.log(`  ${mark(s.platform.healthy)} platform  ${s.platform.url}; ${s.platform.detail}`);
  if (s.gateway)
    console.log(`  ${mark(s.gateway.healthy)} gateway   ${s.gateway.url ?? '-'} (pid ${s.gateway.pid ?? '-'}); ${s.gateway.detail}`);
  for (const sb of s.sandboxes)
    console.log(`  ${mark(sb.healthy)} sandbox   ${sb.sandboxID}${sb.node ? ` (${sb.node}, ${sb.address})` : ''}; ${sb.detail}`);
  for (const t of s.templates) {
    const label = { waiting: 'wait', building: '... ', ready: 'ok  ', failed: 'FAIL' }[t.state];
    const cache = t.state === 'ready' && t.layerSteps ? ` (${t.cachedSteps} of ${t.layerSteps} steps from the layer cache)` : '';
    console.log(`  ${label} template  ${t.name}: ${t.state}${cache}${t.message ? `; ${t.message}` : ''}`);
  }
  for (const p of s.problems.filter((p) => !/^(proxy|platform|gateway|sandbox)[: ]/.test(p))) console.log(`  FAIL ${p}`);
  return s.healthy ? 0 : 1;
}
