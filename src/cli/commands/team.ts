/** `sandbox-kit team create|list|quota|delete`: the platform's teams, through its administration API. */
import { adminCall, adminTarget, TARGET_HELP } from '../admin/target';
import { QUOTA_HELP, quotaFlags, quotasFrom, targetFlags } from '../admin/flags';
import { parseFlags } from '../args';

const HELP = `usage: sandbox-kit team create NAME [quotas] | team list | team quota TEAM quotas | team delete TEAM

Teams own sandboxes, templates and keys; a key sees and acts on its own team's only. TEAM is a team's ID or name.
create   makes a team (NAME: 1 to 64 letters, digits, ".", "_", "-"); give it keys with 'sandbox-kit key create'
list     every team with its quotas and current use
quota    changes a team's quotas; one below the team's current use is refused
delete   removes a team and its keys; refused while it has sandboxes, builds or templates

${QUOTA_HELP}

${TARGET_HELP}
--json prints the platform's answer as JSON.`;

type Listed = { teamID: string; name: string; quotas: Record<string, number>; usage: Record<string, number> };

function show(team: Listed): string {
  const quotas = Object.entries(team.quotas).map(([k, v]) => `${k}=${v}`);
  const usage = Object.entries(team.usage)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k}=${v}`);
  return `${team.name}\t${team.teamID}\tquotas: ${quotas.join(' ') || 'none'}\tuses: ${usage.join(' ') || 'nothing'}`;
}

export async function run(argv: string[]): Promise<number> {
  const sub = argv[0];
  const { values, positionals, help } = parseFlags(
    `team ${sub ?? ''}`.trim(),
    argv.slice(1),
    { ...targetFlags, ...quotaFlags },
    sub === 'list' ? { min: 0, max: 0, what: 'no arguments' } : { min: 1, max: 1, what: 'one team name or ID' },
  );
  if (help || sub === undefined || !['create', 'list', 'quota', 'delete'].includes(sub)) {
    console.log(HELP);
    return help ? 0 : 2;
  }
  const target = adminTarget(values);
  const print = (answer: unknown, text: string) => console.log(values.json ? JSON.stringify(answer, null, 2) : text);
  if (sub === 'create') {
    const team = (await adminCall(target, 'POST', '/admin/teams', { name: positionals[0], quotas: quotasFrom(values) })) as Listed;
    print(team, `team ${team.name} made: ${team.teamID}`);
  } else if (sub === 'list') {
    const teams = (await adminCall(target, 'GET', '/admin/teams')) as Listed[];
    print(teams, teams.map(show).join('\n'));
  } else if (sub === 'quota') {
    const team = (await adminCall(target, 'PUT', `/admin/teams/${encodeURIComponent(positionals[0] as string)}/quotas`, {
      quotas: quotasFrom(values),
    })) as Listed;
    print(team, show(team));
  } else {
    await adminCall(target, 'DELETE', `/admin/teams/${encodeURIComponent(positionals[0] as string)}`);
    print({ deleted: positionals[0] }, `team ${positionals[0]} deleted`);
  }
  return 0;
}
