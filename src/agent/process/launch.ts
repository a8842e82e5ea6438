/**
 * How one process is started: the argv, environment and working directory, computed from the request, the user
 * and what /init set. Pure, so every rule is unit-tested without spawning anything.
 *
 * - Environment: PATH, HOME, USER, LOGNAME of the user, then the sandbox env vars from /init, then the request's.
 * - Working directory: the request's `cwd` (relative paths against the user's home), else /init's default workdir,
 *   else the user's home. It must exist (checked by the caller).
 * - User: when it is not the agent's own, `setpriv` switches uid, gid and supplementary groups before exec (Node's
 *   own uid/gid options drop every supplementary group).
 * - OOM score: the runtime gives the agent -1000 so the kernel never picks it, and names the score its children
 *   must have instead (src/runtime/oom.ts); a shell sets it in the child before anything of the user's runs
 *   (writing it from the agent after spawn would leave a window in which the child can already fork).
 * - Terminal: `pty` runs the command under util-linux `script`, which owns the pseudo-terminal; the inner shell
 *   sets the requested size with `stty` before exec, so the program sees it from its first instruction.
 */
import * as path from 'node:path';
import type { UserAccount } from '../accounts';
import { shellQuote } from '../../util/shell-quote';

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface LaunchInput {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd: string | undefined;
  user: UserAccount;
  supplementaryGroups: number[];
  sandboxEnv: Record<string, string>;
  defaultWorkdir: string | undefined;
  pty: { cols: number; rows: number } | undefined;
  /** The uid the agent runs as: no user switch is needed for that user. */
  agentUid: number;
  /** The oom_score_adj every child gets, when the runtime asked for one. */
  childOomScoreAdj: number | undefined;
}

export interface LaunchPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export function planLaunch(input: LaunchInput): LaunchPlan {
  const { user } = input;
  const env: Record<string, string> = {
    PATH: DEFAULT_PATH,
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    ...input.sandboxEnv,
    ...input.envs,
  };
  const cwd = resolveCwd(input.cwd, input.defaultWorkdir, user.home);

  let argv = [input.cmd, ...input.args];
  if (input.pty) {
    const shell = env.SHELL === undefined ? 'unset SHELL' : `export SHELL=${shellQuote(env.SHELL)}`;
    const inner = `stty cols ${input.pty.cols} rows ${input.pty.rows} 2>/dev/null; ${shell}; exec ${argv.map(shellQuote).join(' ')}`;
    argv = ['script', '--quiet', '--flush', '--return', '--command', inner, '/dev/null'];
    // script runs `$SHELL -c`; a POSIX shell reads the inner line as written.
    env.SHELL = '/bin/sh';
  }
  if (user.uid !== input.agentUid) {
    const groups = input.supplementaryGroups.length > 0 ? ['--groups', input.supplementaryGroups.join(',')] : ['--clear-groups'];
    argv = ['setpriv', '--reuid', String(user.uid), '--regid', String(user.gid), ...groups, '--', ...argv];
  }
  if (input.childOomScoreAdj !== undefined) {
    argv = ['/bin/sh', '-c', `echo ${input.childOomScoreAdj} >/proc/self/oom_score_adj && exec "$@"`, 'sh', ...argv];
  }
  return { file: argv[0]!, args: argv.slice(1), env, cwd };
}

export function resolveCwd(cwd: string | undefined, defaultWorkdir: string | undefined, home: string): string {
  if (cwd !== undefined && cwd !== '') {
    const expanded = cwd === '~' || cwd.startsWith('~/') ? home + cwd.slice(1) : cwd;
    return path.posix.resolve(home, expanded);
  }
  return defaultWorkdir ?? home;
}
