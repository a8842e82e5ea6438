/**
 * `sandbox-kit agent [--port 49983] [--host 0.0.0.0] [--token-file F] [--default-user U] [--brand Svc]
 *                    [--max-entries N] [--max-body-bytes N]`
 * Runs the in-sandbox filesystem agent until SIGINT/SIGTERM. Prints "agent listening on HOST:PORT" once ready.
 */
import * as fs from 'node:fs';
import { integer, text } from '../../config';
import { parseFlags, valueFlag } from '../args';
import { DEFAULT_AGENT_PORT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_ENTRIES, startAgent } from '../../agent';

const HELP = `usage: sandbox-kit agent [options]

Runs the in-sandbox filesystem agent (Connect protocol, JSON): POST /filesystem.Filesystem/Stat and /ListDir.

options:
  --port N            port to listen on (default ${DEFAULT_AGENT_PORT}; 0 picks a free one)
  --host ADDR         address to listen on (default 0.0.0.0)
  --token-file F      file holding the sandbox access token; requests must then send it as X-Access-Token
  --default-user U    user for requests without an Authorization header (default: the agent's own user)
  --brand B           brand token; metadata comes from xattrs under user.<b lower>. (default Svc)
  --max-entries N     largest ListDir answer, in entries; more is resource_exhausted (default ${DEFAULT_MAX_ENTRIES})
  --max-body-bytes N  largest request body (default ${DEFAULT_MAX_BODY_BYTES})`;

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

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('agent', argv, {
    port: valueFlag(integer(0, 65535, 'a port from 0 to 65535 (0 picks a free one)').optional()),
    host: valueFlag(text(/^\S+$/, 'an address to listen on, such as 0.0.0.0').optional()),
    'token-file': valueFlag(text(/.+/, 'a file path').optional()),
    'default-user': valueFlag(text(/^[a-z_][a-z0-9_-]*$/, 'a Unix user name').optional()),
    brand: valueFlag(text(/^[A-Z][A-Za-z0-9]{0,31}$/, 'a capitalised word of letters and digits, such as Svc').optional()),
    'max-entries': valueFlag(integer(0, Number.MAX_SAFE_INTEGER, 'a non-negative integer').optional()),
    'max-body-bytes': valueFlag(integer(0, Number.MAX_SAFE_INTEGER, 'a non-negative integer').optional()),
  });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const agent = await startAgent({
    port: values.port,
    host: values.host,
    accessToken: values['token-file'] === undefined ? undefined : readToken(values['token-file']),
    defaultUser: values['default-user'],
    brand: values.brand,
    maxEntries: values['max-entries'],
    maxBodyBytes: values['max-body-bytes'],
  });
  console.log(`agent listening on ${agent.host}:${agent.port}`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await agent.close();
  return 0;
}
