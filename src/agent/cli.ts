/**
 * The agent's command line, shared by `sandbox-kit agent` and the standalone entry (main.ts, which the runtime
 * bundles into one file and runs in every sandbox). Prints "agent listening on HOST:PORT" once ready and runs until
 * SIGINT/SIGTERM. Exit codes: 0 after a clean stop, 2 for usage errors, 1 for failures.
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_AGENT_PORT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_RESPONSE_BYTES } from './options';
import { startAgent } from './server';
import { nativeWalkUnavailable } from './filesystem/native-walk';

export const AGENT_HELP = `usage: sandbox-kit agent [options]

Runs the in-sandbox agent: the filesystem and process services (Connect protocol, JSON), /files, /init, /envs
and /health, on one port.

options:
  --port N                port to listen on (default ${DEFAULT_AGENT_PORT}; 0 picks a free one)
  --host ADDR             address to listen on (default 0.0.0.0)
  --token-file F          file holding the sandbox access token (POST /init can set it instead)
  --token-env NAME        environment variable holding the sandbox access token (removed from the agent's
                          environment once read; the runtime starts every sandbox's agent this way)
  --default-user U        user for requests without one (default: the agent's own user; /init can change it)
  --brand B               brand token; metadata lives in xattrs under user.<b lower>. (default Svc)
  --max-entries N         largest ListDir answer, in entries; more is resource_exhausted (default ${DEFAULT_MAX_ENTRIES})
  --max-body-bytes N      largest request body of a unary call (default ${DEFAULT_MAX_BODY_BYTES})
  --max-response-bytes N  unsent ListDir answers of all calls together (default ${DEFAULT_MAX_RESPONSE_BYTES})`;

const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'token-file': { type: 'string' },
  'token-env': { type: 'string' },
  'default-user': { type: 'string' },
  brand: { type: 'string' },
  'max-entries': { type: 'string' },
  'max-body-bytes': { type: 'string' },
  'max-response-bytes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

function integerFlag(name: string, value: string | undefined, problems: string[]): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) {
    problems.push(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return Number(value);
}

function readToken(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`agent: --token-file ${file}: ${(err as Error).message}`);
  }
  const token = text.replace(/\r?\n$/, '');
  if (token === '') throw new Error(`agent: --token-file ${file} is empty`);
  return token;
}

/** The token from an environment variable, which is then dropped so nothing the agent starts could inherit it. */
function tokenFromEnv(name: string): string {
  const token = process.env[name];
  delete process.env[name];
  if (token === undefined || token === '') throw new Error(`agent: --token-env ${name}: the variable is not set`);
  return token;
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    const accepted = Object.keys(FLAGS)
      .map((o) => `--${o}`)
      .join(', ');
    throw new UsageError(`agent: ${(err as Error).message} (options: ${accepted})`);
  }
}

/**
 * Writes the ready line to fd 1 in one synchronous write. console.log would first build process.stdout (about 3 ms
 * to a file, 5 to a pipe), spent after the agent listens, while the platform's first /health waits. A closed or
 * missing stdout costs the line, not the agent.
 */
function sayReady(line: string): void {
  try {
    fs.writeSync(1, line);
  } catch {
    // nothing reads it
  }
}

export async function runAgentCli(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>;
  const problems: string[] = [];
  let numbers: Record<string, number | undefined>;
  try {
    values = parse(argv);
    numbers = {
      port: integerFlag('port', values.port, problems),
      maxEntries: integerFlag('max-entries', values['max-entries'], problems),
      maxBodyBytes: integerFlag('max-body-bytes', values['max-body-bytes'], problems),
      maxResponseBytes: integerFlag('max-response-bytes', values['max-response-bytes'], problems),
    };
    if (problems.length > 0) throw new UsageError(`agent: ${problems.join('; ')}`);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(err.message);
    return 2;
  }
  if (values.help) {
    console.log(AGENT_HELP);
    return 0;
  }
  let agent: Awaited<ReturnType<typeof startAgent>>;
  try {
    agent = await startAgent({
      ...numbers,
      host: values.host,
      accessToken:
        values['token-env'] !== undefined
          ? tokenFromEnv(values['token-env'])
          : values['token-file'] === undefined
            ? undefined
            : readToken(values['token-file']),
      defaultUser: values['default-user'],
      brand: values.brand,
    });
  } catch (err) {
    const message = (err as Error).message;
    console.error(message.startsWith('agent:') ? message : `agent: ${message}`);
    return message.startsWith('invalid agent options') ? 2 : 1;
  }
  // The answers are the same without the addon, only slower: said once, so a build that lost it is seen.
  if (nativeWalkUnavailable !== undefined)
    console.error(`agent: ListDir walks with node:fs, not the native walk: ${nativeWalkUnavailable}`);
  sayReady(`agent listening on ${agent.host}:${agent.port}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await agent.close();
  return 0;
}
