import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_BRAND } from '../../contract/brand';
import { DEFAULT_LIMITS, startGateway, type GatewayLimits } from '../../gateway';
import { openCatalog } from '../../catalog';
import { platformResumer } from '../../gateway/platform-resumer';
import { isGatewayWorker, leaveWorkerPool, startGatewayWorkers } from '../../gateway/workers';
import { parseFlags } from '../args';

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
  --resume-url URL            platform API base used to auto-resume paused sandboxes that allow it
  --api-key-file F            file holding the platform API key for --resume-url
  --max-header-bytes N        largest request head (default ${DEFAULT_LIMITS.maxHeaderBytes})
  --headers-timeout-ms N      time a client has to send its request head (default ${DEFAULT_LIMITS.headersTimeoutMs})
  --request-timeout-ms N      time a client has to send its whole request (default ${DEFAULT_LIMITS.requestTimeoutMs})
  --idle-timeout-ms N         close connections idle this long (default ${DEFAULT_LIMITS.idleTimeoutMs})
  --upstream-timeout-ms N     wait for a sandbox's response head (default ${DEFAULT_LIMITS.upstreamTimeoutMs})
  --connect-timeout-ms N      wait for a TCP connection to a sandbox (default ${DEFAULT_LIMITS.connectTimeoutMs})
  --max-sockets-per-upstream N  connections to one sandbox port at most (default ${DEFAULT_LIMITS.maxSocketsPerUpstream})
  --listen-backlog N          queue of accepted-but-not-taken connections (default ${DEFAULT_LIMITS.listenBacklog}; the kernel caps it at net.core.somaxconn)
  --workers N                 gateway processes sharing the port (default 1; above 1 needs a file: or redis:// catalog)`;

const count = (flag: string, min: number) =>
  z.coerce
    .number({ message: `${flag}: expected an integer` })
    .int({ message: `${flag}: expected an integer` })
    .min(min, { message: `${flag}: expected at least ${min}` });

const flagsSchema = z.object({
  port: count('--port', 0).max(65535, { message: '--port: expected 0 to 65535' }).default(0),
  host: z.string().min(1).default('0.0.0.0'),
  catalog: z.string({ message: '--catalog is required: memory, file:PATH or redis://HOST:PORT' }).min(1),
  brand: z.string().default(DEFAULT_BRAND),
  domain: z.string().min(1).default('localhost'),
  'catalog-cache-ms': count('--catalog-cache-ms', 0).default(2000),
  'redis-prefix': z.string().optional(),
  'resume-url': z.url({ message: '--resume-url: expected an http(s) URL' }).optional(),
  'api-key-file': z.string().optional(),
  'max-header-bytes': count('--max-header-bytes', 1024).optional(),
  'headers-timeout-ms': count('--headers-timeout-ms', 100).optional(),
  'request-timeout-ms': count('--request-timeout-ms', 0).optional(),
  'idle-timeout-ms': count('--idle-timeout-ms', 0).optional(),
  'upstream-timeout-ms': count('--upstream-timeout-ms', 1).optional(),
  'connect-timeout-ms': count('--connect-timeout-ms', 1).optional(),
  'max-sockets-per-upstream': count('--max-sockets-per-upstream', 1).optional(),
  'listen-backlog': count('--listen-backlog', 1).max(65535, { message: '--listen-backlog: expected 1 to 65535' }).optional(),
  workers: count('--workers', 1).max(64, { message: '--workers: expected 1 to 64' }).default(1),
});

export async function run(argv: string[]): Promise<number> {
  const stringFlags = Object.fromEntries(Object.keys(flagsSchema.shape).map((k) => [k, { type: 'string' as const }]));
  const { values } = parseFlags('gateway', argv, { ...stringFlags, help: { type: 'boolean' as const } });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success) {
    console.error(`sandbox-kit gateway: ${parsed.error.issues.map((i) => (i.path.length ? `${i.message.startsWith('--') ? '' : `--${String(i.path[0])}: `}${i.message}` : i.message)).join('; ')}`);
    return 2;
  }
  const flags = parsed.data;
  if (flags.workers > 1 && flags.catalog === 'memory') {
    console.error('sandbox-kit gateway: --workers above 1 needs a shared catalog (file:PATH or redis://...): each worker would have its own empty memory catalog');
    return 2;
  }
  const log = (line: string) => console.error(`gateway: ${line}`);
  if (flags.workers > 1 && !isGatewayWorker()) return runPrimary(flags.workers, log);
  const limits: Partial<GatewayLimits> = {
    maxHeaderBytes: flags['max-header-bytes'],
    headersTimeoutMs: flags['headers-timeout-ms'],
    requestTimeoutMs: flags['request-timeout-ms'],
    idleTimeoutMs: flags['idle-timeout-ms'],
    upstreamTimeoutMs: flags['upstream-timeout-ms'],
    connectTimeoutMs: flags['connect-timeout-ms'],
    maxSocketsPerUpstream: flags['max-sockets-per-upstream'],
    listenBacklog: flags['listen-backlog'],
  };
  for (const key of Object.keys(limits) as (keyof GatewayLimits)[]) if (limits[key] === undefined) delete limits[key];

  const apiKey = flags['api-key-file'] === undefined ? undefined : readFileSync(flags['api-key-file'], 'utf8').trim();
  const catalog = await openCatalog(flags.catalog, { cacheTtlMs: flags['catalog-cache-ms'], redisPrefix: flags['redis-prefix'], onError: log });
  if (flags.catalog === 'memory') log('the memory catalog starts empty; it is meant for an in-process gateway filled by the platform');
  let gateway;
  try {
    gateway = await startGateway({
      catalog,
      port: flags.port,
      host: flags.host,
      brand: flags.brand,
      domain: flags.domain,
      limits,
      resumeSandbox: flags['resume-url'] ? platformResumer(flags['resume-url'], apiKey) : undefined,
      log,
    });
  } catch (err) {
    await catalog.close();
    throw err;
  }
  // A worker's address is announced by the primary, once for all workers.
  if (!isGatewayWorker()) console.log(`gateway listening on ${gateway.host}:${gateway.port}`);

  const running = gateway;
  await untilStopSignal();
  await running.close();
  await catalog.close();
  leaveWorkerPool();
  return 0;
}

/** The primary of `--workers N`: starts the workers, announces their shared address, stops them on a signal. */
async function runPrimary(count: number, log: (line: string) => void): Promise<number> {
  const workers = await startGatewayWorkers(count, log);
  console.log(`gateway listening on ${workers.host}:${workers.port} (${count} workers: ${workers.pids().join(', ')})`);
  await untilStopSignal();
  await workers.stop();
  return 0;
}

function untilStopSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
