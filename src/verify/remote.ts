/** A shell on the proxy host: what the checks need from SSH, and what a test fakes. */
import { shellQuote } from '../util/shell-quote';

export interface CommandResult {
  stdout: string;
  stderr: string;
  /** Exit status; null when the command was killed by a signal. */
  code: number | null;
}

export interface Remote {
  exec(command: string): Promise<CommandResult>;
}

// A non-root login shell may lack the sbin directories (sysctl, tc); sudo's secure_path has them, root's PATH too.
const PATH_PREAMBLE = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH; ';

/** The command line that runs `script` as root: directly for root, through `sudo -n` (never prompts) otherwise. */
export function asRoot(script: string, isRoot: boolean): string {
  const inner = `sh -c ${shellQuote(PATH_PREAMBLE + script)}`;
  return isRoot ? inner : `sudo -n ${inner}`;
}
