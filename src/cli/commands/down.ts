/** `sandbox-kit down`: removes the local system; idempotent, also after a crash of `up`. */
import { downLocal } from '../../local';
import { parseFlags, switchFlag } from '../args';
import { labNameFlag } from '../lab-flags';

const HELP = `usage: sandbox-kit down [--name NAME] [--purge]

Stops and removes everything 'sandbox-kit up' made: the gateway, the agents, the proxy host, the namespaces, the host
link and the state. Safe to run again, and after an 'up' that crashed halfway. The platform's state under
/var/lib/sandbox-kit/local/NAME (its templates and their layer cache, the API key) stays for the next 'up', unless
--purge removes it too.`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('down', argv, { name: labNameFlag('local'), purge: switchFlag() });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const removed = await downLocal(values.name, { purge: values.purge });
  console.log(removed.anything ? `removed: ${removed.summary}` : removed.summary);
  return 0;
}
