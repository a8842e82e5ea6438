/**
 * Where the administration commands (team, key, audit) send their calls, and with which admin key: the flags, else
 * the environment, else what this machine's own platform uses (the local system's state, or a sandbox host's
 * /etc/sandbox-kit/api-key: root-only files, which is what "local root may administer" means).
 */
import { existsSync, readFileSync } from 'node:fs';
import { readLocalState, DEFAULT_LOCAL_NAME } from '../../local/state';
import { SANDBOX_HOST_PATHS } from '../../render/sandbox-host-paths';
import { API_KEY_HEADER } from '../../platform/http/server';

export const ADMIN_KEY_ENV = 'SANDBOX_KIT_ADMIN_KEY';

export interface AdminTarget {
  url: string;
  key: string;
}

export const TARGET_HELP = `Where: --api-url URL (default: $E2B_API_URL, else the local system of 'sandbox-kit up'). The admin
key: --api-key-file PATH, else $${ADMIN_KEY_ENV}, else the key file of this machine's platform (root-only): the local
system's, or ${SANDBOX_HOST_PATHS.apiKey} on a sandbox host.`;

function firstKey(path: string): string {
  const key = readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
  if (!key) throw new Error(`${path} holds no key`);
  return key;
}

export function adminTarget(flags: { 'api-url'?: string; 'api-key-file'?: string }, env = process.env): AdminTarget {
  const local = flags['api-url'] === undefined || flags['api-key-file'] === undefined ? readLocalState(DEFAULT_LOCAL_NAME) : undefined;
  const url = flags['api-url'] ?? env.E2B_API_URL ?? local?.platform?.url;
  if (url === undefined) throw new Error('no platform API: give --api-url URL or set E2B_API_URL (no local system is up)');
  let key: string;
  if (flags['api-key-file'] !== undefined) key = firstKey(flags['api-key-file']);
  else if (env[ADMIN_KEY_ENV]) key = env[ADMIN_KEY_ENV] as string;
  else if (local?.platform) key = firstKey(local.platform.apiKeyFile);
  else if (existsSync(SANDBOX_HOST_PATHS.apiKey)) key = firstKey(SANDBOX_HOST_PATHS.apiKey);
  else throw new Error(`no admin key: give --api-key-file PATH or set ${ADMIN_KEY_ENV}`);
  return { url: url.replace(/\/+$/, ''), key };
}

/** One call to the platform's API; a non-2xx answer becomes an Error with the platform's own message. */
export async function adminCall(target: AdminTarget, method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: { [API_KEY_HEADER]: target.key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new Error(`the platform API at ${target.url} did not answer (${cause})`);
  }
  const text = await res.text();
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  if (!res.ok) throw new Error(`the platform answered ${res.status}: ${(parsed as { message?: string } | undefined)?.message ?? text}`);
  return parsed;
}
