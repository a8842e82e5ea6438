/**
 * The code-interpreter wire as `@e2b/code-interpreter` speaks it (port 49999): request bodies parsed and checked,
 * the kernel's events turned into the NDJSON lines `runCode` reads. Pure: no I/O here.
 */

/** The languages a context can run, by the names clients use for them. */
export const LANGUAGES = { python: 'python', javascript: 'javascript', js: 'javascript', bash: 'bash' } as const;
export type Language = (typeof LANGUAGES)[keyof typeof LANGUAGES];
export const DEFAULT_LANGUAGE: Language = 'python';

export type Parsed<T> = { ok: true; value: T } | { ok: false; status: 400 | 404; message: string };

export interface ExecuteRequest {
  code: string;
  contextId?: string;
  language?: Language;
  envs: Record<string, string>;
}

export interface ContextRequest {
  language: Language;
  cwd?: string;
}

/** What a kernel reports while it runs one piece of code (kernel-bridge.py and js-kernel.ts send these). */
export type KernelEvent =
  | { type: 'stdout' | 'stderr'; text: string }
  | { type: 'result'; data: Record<string, unknown>; main: boolean }
  | { type: 'error'; name: string; value: string; traceback: string }
  | { type: 'count'; n: number };

const fail = (message: string, status: 400 | 404 = 400) => ({ ok: false as const, status, message });

function parseObject(body: string): Parsed<Record<string, unknown>> {
  let value: unknown;
  try {
    value = body.trim() === '' ? {} : JSON.parse(body);
  } catch (err) {
    return fail(`the body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('the body must be a JSON object');
  return { ok: true, value: value as Record<string, unknown> };
}

/** `language`: one of python (default), javascript (or js), bash; case-insensitive. */
export function parseLanguage(raw: unknown): Parsed<Language | undefined> {
  if (raw === undefined || raw === null) return { ok: true, value: undefined };
  const known = typeof raw === 'string' ? LANGUAGES[raw.toLowerCase() as keyof typeof LANGUAGES] : undefined;
  if (known === undefined) return fail(`language ${JSON.stringify(raw)} is not supported: use one of ${Object.keys(LANGUAGES).join(', ')}`);
  return { ok: true, value: known };
}

/** `POST /execute`: `code` (string, required), `context_id` or `language` (not both), `env_vars` (strings). */
export function parseExecuteRequest(body: string): Parsed<ExecuteRequest> {
  const parsed = parseObject(body);
  if (!parsed.ok) return parsed;
  const { code, context_id: contextId, language, env_vars: envVars } = parsed.value;
  if (typeof code !== 'string') return fail('code must be a string (the code to run)');
  if (contextId !== undefined && contextId !== null && typeof contextId !== 'string') return fail('context_id must be a string');
  const lang = parseLanguage(language);
  if (!lang.ok) return lang;
  if (contextId && lang.value) return fail('give context_id or language, not both');
  const envs: Record<string, string> = {};
  if (envVars !== undefined && envVars !== null) {
    if (typeof envVars !== 'object' || Array.isArray(envVars)) return fail('env_vars must be an object of strings');
    for (const [k, v] of Object.entries(envVars)) {
      if (typeof v !== 'string') return fail(`env_vars.${k} must be a string`);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) return fail(`env_vars: ${JSON.stringify(k)} is not a variable name`);
      envs[k] = v;
    }
  }
  return {
    ok: true,
    value: { code, envs, ...(contextId ? { contextId } : {}), ...(lang.value ? { language: lang.value } : {}) },
  };
}

/** `POST /contexts`: `language` (default python), `cwd` (an absolute path; default the server's). */
export function parseContextRequest(body: string): Parsed<ContextRequest> {
  const parsed = parseObject(body);
  if (!parsed.ok) return parsed;
  const lang = parseLanguage(parsed.value.language);
  if (!lang.ok) return lang;
  const cwd = parsed.value.cwd;
  if (cwd !== undefined && cwd !== null && (typeof cwd !== 'string' || !cwd.startsWith('/'))) return fail('cwd must be an absolute path');
  return { ok: true, value: { language: lang.value ?? DEFAULT_LANGUAGE, ...(cwd ? { cwd } : {}) } };
}

/** The SDK's Result fields by MIME type; any other type keeps its own name (the SDK files it under `extra`). */
const RESULT_FIELDS: Record<string, string> = {
  'text/plain': 'text',
  'text/html': 'html',
  'text/markdown': 'markdown',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'application/pdf': 'pdf',
  'text/latex': 'latex',
  'application/json': 'json',
  'application/javascript': 'javascript',
};

/** One NDJSON line (without its newline) for an event of the kernel. */
export function eventLine(event: KernelEvent): string {
  switch (event.type) {
    case 'stdout':
    case 'stderr':
      return JSON.stringify({ type: event.type, text: event.text, timestamp: new Date().toISOString() });
    case 'result': {
      const fields: Record<string, unknown> = {};
      for (const [mime, value] of Object.entries(event.data)) fields[RESULT_FIELDS[mime] ?? mime] = value;
      return JSON.stringify({ type: 'result', ...fields, is_main_result: event.main });
    }
    case 'error':
      return JSON.stringify({ type: 'error', name: event.name, value: event.value, traceback: event.traceback });
    case 'count':
      return JSON.stringify({ type: 'number_of_executions', execution_count: event.n });
  }
}

/** The last line of every execution. */
export const END_LINE = JSON.stringify({ type: 'end_of_execution' });
