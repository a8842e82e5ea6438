/** `sandbox-kit audit`: the platform's audit trail, newest first. */
import { z } from 'zod';
import { integer } from '../../config/fields';
import { adminCall, adminTarget, TARGET_HELP } from '../admin/target';
import { targetFlags } from '../admin/flags';
import { parseFlags, valueFlag } from '../args';

const HELP = `usage: sandbox-kit audit [--team TEAM] [--action ACTION] [--since UNIX_SECONDS] [--limit N]

Who (team, key ID) changed what (sandbox.create, sandbox.connect, sandbox.pause, sandbox.resume, sandbox.timeout,
sandbox.kill, template.create, template.build, template.update, template.delete, team.*, key.*), when, from which
address, and the status it was answered with. Newest first; the platform keeps the newest 100000 entries.

${TARGET_HELP}
--json prints the entries as JSON.`;

type Entry = { at: string; teamID: string; keyID: string; action: string; target: string; from: string; status: number };

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('audit', argv, {
    ...targetFlags,
    team: valueFlag(z.string().min(1).optional()),
    action: valueFlag(z.string().min(1).optional()),
    since: valueFlag(integer(0, 1e11, 'Unix time in seconds').optional()),
    limit: valueFlag(integer(1, 100_000, 'an integer from 1 to 100000').optional()),
  });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const query = new URLSearchParams();
  if (values.team !== undefined) query.set('team', values.team);
  if (values.action !== undefined) query.set('action', values.action);
  if (values.since !== undefined) query.set('since', String(values.since));
  if (values.limit !== undefined) query.set('limit', String(values.limit));
  const entries = (await adminCall(adminTarget(values), 'GET', `/admin/audit?${query}`)) as Entry[];
  if (values.json) console.log(JSON.stringify(entries, null, 2));
  else for (const e of entries) console.log(`${e.at}\t${e.teamID}\t${e.keyID}\t${e.action}\t${e.target || '-'}\t${e.from}\t${e.status}`);
  return 0;
}
