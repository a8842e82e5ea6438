/** `sandbox-kit down`: removes the local system; idempotent, also after a crash of `up`. */
import { downLocal } from '../../local';
import { parseFlags } from '../args';
import { labNameFlag } from '../lab-flags';

const HELP = `usage: sandbox-kit down [--name NAME]

Stops and removes everything 'sandbox-kit up' made: the gateway, the agents, the proxy host, the namespaces, the host
link and the state. Safe to run again, and after an 'up' that crashed halfway.`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('down', argv, { name: labNameFlag('local') });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const removed = await downLocal(values.name);
  console.log(removed.anything ? `removed: ${removed.summary}` : removed.summary);
  return 0;
}
