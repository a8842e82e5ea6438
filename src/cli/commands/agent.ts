/** `sandbox-kit agent [options]`: the in-sandbox agent (src/agent/cli.ts has the flags; src/agent/main.ts runs the same standalone). */
import { runAgentCli } from '../../agent/cli';

export function run(argv: string[]): Promise<number> {
  return runAgentCli(argv);
}
