import { join } from 'node:path';
import type { DefinitionName } from './definitions';
import { runScript } from '../../../../helpers/node-script';
import { API_KEY } from './template-platform';

export type Message = Record<string, unknown> & { t: string; message?: string };

export interface SdkBuild {
  messages: Message[];
  logs: string[];
  done?: { templateId: string; buildId: string; name: string; tags: string[] };
  error?: { name: string; message: string };
}

/** Builds a named definition with the unmodified SDK in a child process; resolves with what it saw. */
export async function sdkBuild(
  apiUrl: string,
  definition: DefinitionName,
  alias: string,
  context: string,
  probeOn?: string,
  skipCache = false,
  apiKey = API_KEY,
): Promise<SdkBuild> {
  const messages: Message[] = [];
  const result = await runScript(
    join(__dirname, 'sdk-client.ts'),
    { apiUrl, apiKey, alias, context, probeOn, definition, skipCache },
    (m) => messages.push(m as Message),
  );
  if (result.code !== 0) throw new Error(`sdk client exited ${result.code}: ${result.stderr}`);
  const done = messages.find((m) => m.t === 'done');
  const error = messages.find((m) => m.t === 'error');
  return {
    messages,
    logs: messages.filter((m) => m.t === 'log').map((m) => m.message!),
    done: done?.info as SdkBuild['done'],
    error: error ? { name: String(error.name), message: String(error.message) } : undefined,
  };
}

/** The build must have succeeded; otherwise fail with its error and last log lines. */
export function succeeded(b: SdkBuild): NonNullable<SdkBuild['done']> {
  if (b.error || !b.done) throw new Error(`build failed: ${b.error?.message}\n${b.logs.slice(-40).join('\n')}`);
  return b.done;
}
