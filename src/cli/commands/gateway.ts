import { readFileSync } from 'node:fs';
import { DEFAULT_BRAND } from '../../contract/brand';
import { DEFAULT_LIMITS, startGateway, type GatewayLimits, type RunningGateway } from '../../gateway';
import { type ApiUpstream, parseApiUpstream } from '../../gateway/options';
import { openCatalog } from '../../catalog';
import { platformResumer } from '../../gateway/platform-resumer';
import { platformSignedUrlOwner } from '../../gateway/signed-url';
import { integer, text } from '../../config';
import { parseFlags, requiredFlag, valueFlag } from '../args';
import { isGatewayWorker, leaveWorkerPool, startGatewayWorkers } from '../../gateway/workers';
import { readSecretFile } from '../secret-file';
import { untilStopSignal } from '../stop-signal';
import { parseApiKeyFile } from '../../platform/teams/api-keys';

const HELP = `usage: sandbox-kit gateway --catalog memory|file:PATH|redis://HOST:PORT[/DB] [options]

Runs the shared sandbox host: routes each request by the {Brand}-Sandbox-Id / {Brand}-Sandbox-Port headers
(or the host {port}-{sandboxID}.{domain}) to that sandbox, after checking X-Access-Token.

options:
  --port P                    listen port (default 0: a free port, printed)
  --host H                    listen address (default 0.0.0.0)
  --catalog SPEC              where sandboxes are looked up (required)
  --brand B                   header brand token shared with the agent (default ${DEFAULT_BRAND}); E2b-Sandbox-Id/-Port always work too
  --domain D                  domain of the host form (default localhost)
  --catalog-cache-ms N        how long a Redis lookup is reused (default 2000; changes invalidate at once)
  --redis-prefix P            key prefix in Redis (default sandbox-kit:)
  --catalog-password-file F   the Redis catalog's AUTH password, in a file (0600)
  --resume-url URL            platform API base: auto-resumes paused sandboxes that allow it, and finds the sandbox of a
                              signed /files URL that names none (the E2B_SANDBOX_URL form)
  --api-key-file F            file holding the platform API key for --resume-url
  --api-upstream UPSTREAM     the platform API for requests to api.<domain> (the E2B_DOMAIN form): HOST:PORT (plain
                              HTTP) or https://HOST[:PORT] (TLS, its certificate checked against HOST)
  --metrics-port P            serve Prometheus metrics (GET /metrics) on this port of --host (0 picks one, printed)
  --max-header-bytes N        largest request head (default ${DEFAULT_LIMITS.maxHeaderBytes})
  --headers-timeout-ms N      time a client has to send its request head (default ${DEFAULT_LIMITS.headersTimeoutMs})
  --request-timeout-ms N      time a client has to send its whole request (default ${DEFAULT_LIMITS.requestTimeoutMs})
  --idle-timeout-ms N         close connections idle this long (default ${DEFAULT_LIMITS.idleTimeoutMs})
  --keep-alive-timeout-ms N   close a client's keep-alive connection idle between requests this long (default ${DEFAULT_LIMITS.keepAliveTimeoutMs})
  --upstream-timeout-ms N     wait for a sandbox's response head (default ${DEFAULT_LIMITS.upstreamTimeoutMs})
  --connect-timeout-ms N      wait for a TCP connection to a sandbox (default ${DEFAULT_LIMITS.connectTimeoutMs})
  --max-sockets-per-upstream N  connections to one sandbox port at most (default ${DEFAULT_LIMITS.maxSocketsPerUpstream})
  --listen-backlog N          queue of accepted-but-not-taken connections (default ${DEFAULT_LIMITS.listenBacklog}; the kernel caps it at net.core.somaxconn)
  --workers N                 gateway processes sharing the port (default 1; above 1 needs a file: or redis:// catalog)`;

const API_UPSTREAM_WHAT = 'the platform API as HOST:PORT (such as 127.0.0.1:3001) or https://HOST[:PORT]';
const atLeast = (min: number) => integer(min, Number.MAX_SAFE_INTEGER, `an integer of at least ${min}`);
const word = (what: string) => text(/^\S+$/, what);

const FLAGS = {
  port: valueFlag(integer(0, 65535, 'a port from 0 to 65535 (0 picks a free one)').default(0)),
  host: valueFlag(word('an address to listen on, such as 0.0.0.0').default('0.0.0.0')),
  catalog: requiredFlag(
    text(/^(memory|file:.+|redis:\/\/.+)$/, 'memory, file:PATH or redis://HOST:PORT[/DB]'),
    'memory, file:PATH or redis://HOST:PORT[/DB]',
  ),
  brand: valueFlag(text(/^[A-Z][A-Za-z0-9]{0,31}$/, 'a capitalised word of letters and digits, such as Svc').default(DEFAULT_BRAND)),
  domain: valueFlag(word('a DNS domain such as sandbox.example.com').default('localhost')),
  'catalog-cache-ms': valueFlag(atLeast(0).default(2000)),
  'redis-prefix': valueFlag(word('a key prefix such as sandbox-kit:').optional()),
  'catalog-password-file': valueFlag(word('a file path').optional()),
  'resume-url': valueFlag(text(/^https?:\/\/\S+$/, 'an http(s) URL').optional()),
  'api-key-file': valueFlag(word('a file path').optional()),
  'api-upstream': valueFlag(
    text(/^\S+$/, API_UPSTREAM_WHAT)
      .refine((v) => parseApiUpstream(v) !== undefined, { error: `expected ${API_UPSTREAM_WHAT}` })
      .transform((v) => parseApiUpstream(v) as ApiUpstream)
      .optional(),
  ),
  'metrics-port': valueFlag(integer(0, 65535, 'a port from 0 to 65535 (0 picks a free one)').optional()),
  'max-header-bytes': valueFlag(atLeast(1024).optional()),
  'headers-timeout-ms': valueFlag(atLeast(100).optional()),
  'request-timeout-ms': valueFlag(atLeast(0).optional()),
  'idle-timeout-ms': valueFlag(atLeast(0).optional()),
  'keep-alive-timeout-ms': valueFlag(atLeast(1).optional()),
  'upstream-timeout-ms': valueFlag(atLeast(1).optional()),
  'connect-timeout-ms': valueFlag(atLeast(1).optional()),
  'max-sockets-per-upstream': valueFlag(atLeast(1).optional()),
  'listen-backlog': valueFlag(integer(1, 65535, 'an integer from 1 to 65535').optional()),
  workers: valueFlag(integer(1, 64, 'an integer from 1 to 64').default(1)),
};

export async function run(argv: string[]): Promise<number> {
  const { values: flags, help } = parseFlags('gateway', argv, FLAGS);
  if (help) {
    console.log(HELP);
    return 0;
  }
  if (flags.workers > 1 && flags.catalog === 'memory') {
    console.error(
      'sandbox-kit gateway: --workers above 1 needs a shared catalog (file:PATH or redis://...): each worker would have its own empty memory catalog',
    );
    return 2;
  }
  if (flags.workers > 1 && flags['metrics-port'] !== undefined) {
    console.error(
      'sandbox-kit gateway: --metrics-port needs --workers 1: each worker counts its own requests and would need a port of its own',
    );
    return 2;
  }
  const log = (line: string) => console.error(`gateway: ${line}`);
  if (flags.workers > 1 && !isGatewayWorker()) return runPrimary(flags.workers, log);
  const limits: Partial<GatewayLimits> = {
    maxHeaderBytes: flags['max-header-bytes'],
    headersTimeoutMs: flags['headers-timeout-ms'],
    requestTimeoutMs: flags['request-timeout-ms'],
    idleTimeoutMs: flags['idle-timeout-ms'],
    keepAliveTimeoutMs: flags['keep-alive-timeout-ms'],
    upstreamTimeoutMs: flags['upstream-timeout-ms'],
    connectTimeoutMs: flags['connect-timeout-ms'],
    maxSocketsPerUpstream: flags['max-sockets-per-upstream'],
    listenBacklog: flags['listen-backlog'],
  };
  for (const key of Object.keys(limits) as (keyof GatewayLimits)[]) if (limits[key] === undefined) delete limits[key];

  const keyFile = flags['api-key-file'];
  const apiKey = keyFile === undefined ? undefined : parseApiKeyFile(readFileSync(keyFile, 'utf8'), keyFile)[0];
  const catalog = await openCatalog(flags.catalog, {
    cacheTtlMs: flags['catalog-cache-ms'],
    redisPrefix: flags['redis-prefix'],
    redisPassword: readSecretFile(flags['catalog-password-file']),
    onError: log,
  });
  if (flags.catalog === 'memory') log('the memory catalog starts empty; it is meant for an in-process gateway filled by the platform');
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      catalog,
      port: flags.port,
      host: flags.host,
      brand: flags.brand,
      domain: flags.domain,
      limits,
      resumeSandbox: flags['resume-url'] ? platformResumer(flags['resume-url'], apiKey) : undefined,
      apiUpstream: flags['api-upstream'],
      signedUrlOwner: flags['resume-url'] ? platformSignedUrlOwner(flags['resume-url'], apiKey) : undefined,
      ...(flags['metrics-port'] !== undefined ? { metricsPort: flags['metrics-port'] } : {}),
      log,
    });
  } catch (err) {
    await catalog.close();
    throw err;
  }
  // Listen for the stop signals before announcing: whoever reads the line may signal at once.
  const stopped = untilStopSignal();
  // A worker's address is announced by the primary, once for all workers.
  if (!isGatewayWorker()) console.log(`gateway listening on ${gateway.host}:${gateway.port}`);
  if (gateway.metricsPort !== undefined) console.log(`gateway metrics on ${gateway.host}:${gateway.metricsPort}/metrics`);

  const running = gateway;
  await stopped;
  await running.close();
  await catalog.close();
  leaveWorkerPool();
  return 0;
}

/** The primary of `--workers N`: starts the workers, announces their shared address, stops them on a signal. */
async function runPrimary(count: number, log: (line: string) => void): Promise<number> {
  const workers = await startGatewayWorkers(count, log);
  const stopped = untilStopSignal();
  console.log(`gateway listening on ${workers.host}:${workers.port} (${count} workers: ${workers.pids().join(', ')})`);
  await stopped;
  await workers.stop();
  return 0;
}
