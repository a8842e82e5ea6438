/**
 * Runs a TypeScript script in a plain Node process (see test/helpers/node-bundle.ts) and returns its output: the
 * MCP tests read stdout as one text.
 */
import { runEntry } from '../../../helpers/node-script';

export async function runScript(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 300_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const result = await runEntry(entry, { args, env, timeoutMs });
  return { code: result.code, stdout: result.stdout.join('\n'), stderr: result.stderr };
}
