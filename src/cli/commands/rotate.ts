/** `sandbox-kit rotate [--to IP] [--json]`: a new egress address under load, measured. */
import { ipv4 } from '../../config';
import { recreateProxy, rotateEgress } from '../../local';
import { parseFlags, switchFlag, valueFlag } from '../args';
import { labNameFlag } from '../lab-flags';

const HELP = `usage: sandbox-kit rotate [--name NAME] [--to 203.0.113.X] [--json]

Gives the proxy a new egress address, as re-associating the egress Elastic IP does on AWS (pulumi up with a bumped
egress.generation), while a probe in a sandbox keeps making requests through the proxy several times a second.
Prints the old and the new address, how long until the probe saw the new one, and how many probe requests failed.
Sandboxes, their config and the ingress address do not change.

  --to        the new public address (default: the next free one in 203.0.113.0/24)
  --recreate  the destroy-and-recreate path instead (host.generation on AWS): a new proxy host with a new ingress
              address and password, the template rebuilt, the sandboxes recreated from it; reports the downtime
  --json  one JSON object: {"oldEgressIp", "newEgressIp", "secondsToNewAddress", "probes": {"sent", "failed"}}`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('rotate', argv, {
    name: labNameFlag('local'),
    to: valueFlag(ipv4().optional()),
    json: switchFlag(),
    recreate: switchFlag(),
  });
  if (help) {
    console.log(HELP);
    return 0;
  }
  if (values.recreate) {
    const out = values.json ? process.stderr : process.stdout;
    const report = await recreateProxy(values.name, { onProgress: (e) => out.write(`[${e.step}] ${e.message}\n`) });
    if (values.json) console.log(JSON.stringify(report));
    else {
      console.log(`ingress address ${report.oldIngressIp} -> ${report.newIngressIp}; egress address ${report.egressIp}`);
      console.log(`sandboxes recreated: ${report.sandboxes.before.join(', ')} -> ${report.sandboxes.after.join(', ')}`);
      console.log(`downtime: ${report.downtimeSeconds.toFixed(1)} s (old proxy gone until every new sandbox left through the new one)`);
    }
    return 0;
  }
  const report = await rotateEgress(values.name, {
    to: values.to,
    onProgress: (m) => (values.json ? process.stderr : process.stdout).write(`[rotate] ${m}\n`),
  });
  if (values.json) {
    console.log(JSON.stringify(report));
  } else {
    console.log(`egress address ${report.oldEgressIp} -> ${report.newEgressIp}`);
    console.log(`new address seen after ${report.secondsToNewAddress.toFixed(1)} s`);
    console.log(`probe requests: ${report.probes.sent} sent, ${report.probes.failed} failed`);
  }
  return report.probes.failed === 0 ? 0 : 1;
}
