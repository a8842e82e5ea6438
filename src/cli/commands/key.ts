/** `sandbox-kit key create|list|revoke`: API keys of the platform's teams, through its administration API. */
import { z } from 'zod';
import { adminCall, adminTarget, TARGET_HELP } from '../admin/target';
import { targetFlags } from '../admin/flags';
import { parseFlags, switchFlag, valueFlag } from '../args';

const HELP = `usage: sandbox-kit key create --team TEAM NAME [--admin] | key list [--team TEAM] | key revoke KEY_ID

create   makes a key for TEAM (ID or name) and prints it: the only time it is shown (the platform keeps its sha256).
         NAME: 1 to 64 letters, digits, ".", "_", "-". --admin: the key may also run this administration and act on
         every team's resources (the key file's keys are such keys of the default team).
list     the keys (ID, team, name, role, first characters), never the keys themselves
revoke   stops a key at once, on every platform sharing the store, without a restart

${TARGET_HELP}
--json prints the platform's answer as JSON.`;

type Key = { keyID: string; teamID: string; name: string; role: string; createdAt: string; mask: string; source: string; key?: string };

export async function run(argv: string[]): Promise<number> {
  const sub = argv[0];
  const { values, positionals, help } = parseFlags(
    `key ${sub ?? ''}`.trim(),
    argv.slice(1),
    { ...targetFlags, team: valueFlag(z.string().min(1).optional()), admin: switchFlag() },
    sub === 'list' ? { min: 0, max: 0, what: 'no arguments' } : { min: 1, max: 1, what: sub === 'revoke' ? 'one key ID' : 'one key name' },
  );
  if (help || sub === undefined || !['create', 'list', 'revoke'].includes(sub)) {
    console.log(HELP);
    return help ? 0 : 2;
  }
  const target = adminTarget(values);
  const print = (answer: unknown, text: string) => console.log(values.json ? JSON.stringify(answer, null, 2) : text);
  if (sub === 'create') {
    if (values.team === undefined) {
      console.error('sandbox-kit key create: --team TEAM is needed (the team the key acts for)');
      return 2;
    }
    const key = (await adminCall(target, 'POST', '/admin/keys', { team: values.team, name: positionals[0], admin: values.admin })) as Key;
    print(key, `${key.key}\n(key ${key.keyID} of team ${key.teamID}, ${key.role}; shown only now: store it as a secret)`);
  } else if (sub === 'list') {
    const keys = (await adminCall(target, 'GET', `/admin/keys${values.team ? `?team=${encodeURIComponent(values.team)}` : ''}`)) as Key[];
    print(keys, keys.map((k) => `${k.keyID}\t${k.teamID}\t${k.name}\t${k.role}\t${k.mask}\t${k.source}\t${k.createdAt}`).join('\n'));
  } else {
    await adminCall(target, 'DELETE', `/admin/keys/${encodeURIComponent(positionals[0] as string)}`);
    print({ revoked: positionals[0] }, `key ${positionals[0]} revoked`);
  }
  return 0;
}
