/**
 * What `up` needs from this machine, checked before anything changes: root, the Debian tools, a built project. Every
 * problem is reported at once, each with what to do about it.
 */
import { existsSync } from 'node:fs';
import { builtEntryPath } from '../lab/dist-path';
import { labPrerequisites } from '../lab/steps';

export async function localPrerequisites(): Promise<string[]> {
  const problems = await labPrerequisites();
  const cli = builtEntryPath('cli/main');
  if (!existsSync(cli) && !problems.some((p) => p.includes('npm run build'))) {
    problems.push(`${cli} not found: run 'npm run build' first (the gateway and the agents run the built files)`);
  }
  return problems;
}

export class PreflightError extends Error {
  constructor(readonly problems: string[]) {
    super(`cannot bring the local system up on this machine; nothing was changed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'PreflightError';
  }
}
