/**
 * `sandbox-kit platform` runs the E2B-compatible platform API on this host: sandboxes as OCI containers on a
 * standalone sandbox network, state in a private Redis (or --redis), templates, and the catalog for the gateway.
 * With the in-process catalog it also runs the gateway, since nothing else could read that catalog.
 */
import { isIPv4 } from 'node:net';
import {
  buildLimitFields,
  CONFIG_NAMESPACE,
  gcFields,
  integer,
  LIMIT_FLAGS,
  oneOf,
  parseStackConfig,
  text,
  warmPoolEntry,
  type SandboxLimits,
} from '../../config';
import { DEFAULT_RUNSC_PLATFORM, RUNSC_PLATFORMS, RUNTIME_CHOICES } from '../../contract/runtime-choice';
import { startGateway, type RunningGateway } from '../../gateway';
import { startPlatformOnHost } from '../../platform/on-host';
import { DEFAULT_TIMEOUT_SECONDS } from '../../platform/sandboxes/requests';
import { HOST_ID_PATTERN, HOST_ID_RULE } from '../../catalog/entry';
import type { ConfigIssue } from '../../config';
import { listFlag, parseFlags, switchFlag, UsageError, valueFlag } from '../args';
import { readSecretFile } from '../secret-file';
import type { ProxyTarget } from '../../runtime/network/egress-policy';
import { untilStopSignal } from '../stop-signal';

export const DEFAULT_STATE_DIR = '/var/lib/sandbox-kit/platform';

const HELP = `usage: sandbox-kit platform [options]

Runs the sandbox platform API (E2B-compatible: point E2B_API_URL at it). Sandboxes keep running when it stops;
the next start with the same --state-dir finds them again and removes what a crash left half-made.

options:
  --port P            API listen port (default 0: a free port, printed)
  --host H            API listen address (default 127.0.0.1)
  --runtime R         crun, runc, runsc or auto (default auto: crun or runc, what works with this host's cgroups);
                      runsc is gVisor: each sandbox gets a kernel of its own in user space (docs/runtime.md#runsc)
  --runsc-platform P  how gVisor runs under runsc: systrap (default), ptrace, or kvm where /dev/kvm is usable
  --state-dir D       the platform's own data: Redis, API key file, upper dirs, templates (default ${DEFAULT_STATE_DIR})
  --redis URL         keep state in this Redis instead of a private redis-server in the state dir
  --redis-password-file F     the --redis server's AUTH password, in a file (0600)
  --catalog-password-file F   the --catalog Redis's AUTH password (a fleet's ElastiCache auth token), in a file
  --api-key-file F    plain API keys, one per line; created with a new key (mode 0600) when missing
                      (default <state-dir>/api-key)
  --catalog C         memory (in-process, default) or redis://HOST:PORT[/DB] for a fleet of gateways
  --gateway-port P    also run the gateway in this process on port P (always done with --catalog memory;
                      default then 0: a free port)
  --domain D          the domain clients use for host-form sandbox URLs (default: theirs)
  --sandbox-subnet S  the sandboxes' subnet, e.g. this host's delegated prefix 10.0.1.16/28 (default: a free /24
                      of 198.19.0.0/16); the first address is their gateway, the last this host's side
  --route-out         let sandboxes out through this host (a sandbox host, whose rules then filter and NAT them)
  --volumes-dir D     where volumes live, a directory each (default <state-dir>/volumes; in a fleet the mount of
                      the file system every host shares)
  --warm-pool TEMPLATE=N  keep N sandboxes of the template (its name or ID; TEAM/TEMPLATE: a team's own) started
                      (repeatable, one per template; default none: every create starts its sandbox; the stack's
                      sandboxHost.warmPool; docs/platform.md#warm-pool)

template builds (the stack's builds.* keys; docs/security.md, Limits):
  --build-deadline-seconds S  a whole build's deadline (default ${buildLimitFields.deadlineSeconds.parse(undefined)})
  --build-log-line-bytes N    longest build log line kept; longer ones are cut with a marker (default ${buildLimitFields.logLineBytes.parse(undefined)})
  --build-log-bytes N         a build's output kept in its log; past it a marker, the build goes on (default ${buildLimitFields.logBytes.parse(undefined)})
  --concurrent-builds N       builds running at once; more wait in a queue, status waiting (default ${buildLimitFields.concurrent.parse(undefined)})
  --build-step-disk-mb N      disk of each build step; a step writing past it fails the build (default ${buildLimitFields.stepDiskMB.parse(undefined)})

the stack's proxy (docs/network.md: a proxy template's sandboxes leave only through the stack's proxy):
  --stack-egress-template T   a template (alias or ID) of the stack's proxy; its sandboxes reach only the
                              --stack-egress-proxy servers (TCP and UDP), whatever runs inside; repeatable
  --stack-egress-proxy A:P    the stack's proxy server, its ingress IPv4 address and port; repeatable

unused storage (the stack's gc.* keys; docs/templates.md#storage):
  --gc-interval-seconds S     remove unused layers, uploads and pulled images this often; 0: only when asked
                              (sandbox-kit gc) (default ${gcFields.intervalSeconds.parse(undefined)})
  --gc-keep-unused-seconds S  keep an unused one this long after it last changed (default ${gcFields.keepUnusedSeconds.parse(undefined)})

limits (the stack's \`limits\` keys; docs/config.md):
  --pids-limit N --nofile N --console-log-bytes N --memory-overcommit X --cpu-overcommit X --disk-overcommit X
  --disk-default-mb N --disk-max-mb N --template-max-memory-mb N --template-max-cpus N
  --paused-to-disk-after-minutes N --paused-retention-days N --volume-max-mb N
  --no-sandbox-disks  give sandboxes no disk of their own (their writes are bounded only by the state dir's file
                      system; for a host without loop devices)

fleet (with --catalog redis://..., the fleet's shared Redis):
  --host-id ID        this host in the fleet (e.g. its EC2 instance ID); every sandbox's catalog entry names it
  --advertise-url U   where the other hosts reach this API, e.g. http://10.0.1.23:3001
  --capacity N        sandboxes this host takes (default: the sandbox subnet's free addresses)`;

const word = (what: string) => text(/^\S+$/, what);

const STACK_PROXY = "the stack's proxy as IPV4:PORT, such as 203.0.113.10:8388";

/** `203.0.113.10:8388` as a proxy target; undefined when it is not an IPv4 address and a port. */
function proxyTarget(text: string): ProxyTarget | undefined {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(text);
  if (!m || !isIPv4(m[1]!)) return undefined;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { address: m[1]!, port } : undefined;
}

const FLAGS = {
  port: valueFlag(integer(0, 65535, 'a port from 0 to 65535 (0 picks a free one)').default(0)),
  host: valueFlag(word('an address to listen on, such as 127.0.0.1').default('127.0.0.1')),
  runtime: valueFlag(oneOf(RUNTIME_CHOICES).default('auto')),
  'runsc-platform': valueFlag(oneOf(RUNSC_PLATFORMS).default(DEFAULT_RUNSC_PLATFORM)),
  'state-dir': valueFlag(text(/^\/\S*$/, 'an absolute directory path').default(DEFAULT_STATE_DIR)),
  redis: valueFlag(text(/^rediss?:\/\/\S+$/, 'a redis:// URL').optional()),
  'api-key-file': valueFlag(word('a file path').optional()),
  'redis-password-file': valueFlag(word('a file path').optional()),
  'catalog-password-file': valueFlag(word('a file path').optional()),
  catalog: valueFlag(text(/^(memory|rediss?:\/\/\S+)$/, 'memory or redis://HOST:PORT[/DB]').default('memory')),
  'gateway-port': valueFlag(integer(0, 65535, 'a port from 0 to 65535').optional()),
  domain: valueFlag(word('a DNS domain such as sandbox.example.com').optional()),
  'sandbox-subnet': valueFlag(text(/^\d+\.\d+\.\d+\.\d+\/\d{1,2}$/, 'an IPv4 subnet such as 10.0.1.16/28').optional()),
  'route-out': switchFlag(),
  'volumes-dir': valueFlag(text(/^\/\S*$/, 'an absolute directory path').optional()),
  'warm-pool': listFlag(warmPoolEntry()),
  'host-id': valueFlag(text(HOST_ID_PATTERN, HOST_ID_RULE).optional()),
  'advertise-url': valueFlag(text(/^http:\/\/[^\s/]+\/?$/, 'an http:// URL of this API, such as http://10.0.1.23:3001').optional()),
  capacity: valueFlag(integer(1, 100_000, 'a number of sandboxes from 1 to 100000').optional()),
  'stack-egress-template': listFlag(word('a template alias or ID')),
  'stack-egress-proxy': listFlag(
    text(/^\S+$/, STACK_PROXY)
      .refine((v) => proxyTarget(v) !== undefined, { error: `expected ${STACK_PROXY}` })
      .transform((v) => proxyTarget(v) as ProxyTarget),
  ),
  'build-deadline-seconds': valueFlag(buildLimitFields.deadlineSeconds),
  'build-log-line-bytes': valueFlag(buildLimitFields.logLineBytes),
  'build-log-bytes': valueFlag(buildLimitFields.logBytes),
  'concurrent-builds': valueFlag(buildLimitFields.concurrent),
  'build-step-disk-mb': valueFlag(buildLimitFields.stepDiskMB),
  'gc-interval-seconds': valueFlag(gcFields.intervalSeconds),
  'gc-keep-unused-seconds': valueFlag(gcFields.keepUnusedSeconds),
  'no-sandbox-disks': switchFlag(),
  ...(Object.fromEntries(Object.values(LIMIT_FLAGS).map((f) => [f, valueFlag(word('a value').optional())])) as Record<
    string,
    ReturnType<typeof valueFlag<string | undefined>>
  >),
};

/** The limit flags, checked as the stack's `limits` keys are (defaults, ranges, the disk default within the maximum). */
export function limitsFromFlags(flags: Record<string, unknown>): SandboxLimits {
  const given = Object.fromEntries(
    (Object.entries(LIMIT_FLAGS) as Array<[keyof SandboxLimits, string]>)
      .filter(([, flag]) => flags[flag] !== undefined)
      .map(([key, flag]) => [key, flags[flag]]),
  );
  const parsed = parseStackConfig({ limits: given });
  if (parsed.ok) return parsed.config.limits;
  const flagOf = (key: string) => {
    const field = key.replace(`${CONFIG_NAMESPACE}:limits.`, '') as keyof SandboxLimits;
    return LIMIT_FLAGS[field] ? `--${LIMIT_FLAGS[field]}` : key;
  };
  throw new UsageError(
    'platform',
    parsed.issues.map((i) => ({ ...i, key: flagOf(i.key) })),
  );
}

/** The fleet flags go together, with a shared catalog; every problem at once. */
function fleetIssues(flags: { catalog: string; 'host-id'?: string; 'advertise-url'?: string; capacity?: number }): ConfigIssue[] {
  const fleet = flags['host-id'] !== undefined || flags['advertise-url'] !== undefined || flags.capacity !== undefined;
  if (!fleet) return [];
  const issues: ConfigIssue[] = [];
  if (flags['host-id'] === undefined)
    issues.push({ key: '--host-id', given: '(missing)', expected: `with the other fleet flags, ${HOST_ID_RULE}` });
  if (flags['advertise-url'] === undefined)
    issues.push({
      key: '--advertise-url',
      given: '(missing)',
      expected: 'with the other fleet flags, where the other hosts reach this API',
    });
  if (flags.catalog === 'memory')
    issues.push({
      key: '--catalog',
      given: 'memory',
      expected: "the fleet's shared redis://HOST:PORT[/DB] (an in-process catalog is this host's alone)",
    });
  return issues;
}

/** The stack's proxy templates and its proxy go together: templates without a proxy would not be pinned at all. */
function stackEgressIssues(flags: { 'stack-egress-template': string[]; 'stack-egress-proxy': ProxyTarget[] }): ConfigIssue[] {
  const templates = flags['stack-egress-template'].length;
  const proxies = flags['stack-egress-proxy'].length;
  if (templates > 0 && proxies === 0)
    return [{ key: '--stack-egress-proxy', given: '(missing)', expected: `with --stack-egress-template, ${STACK_PROXY}` }];
  if (proxies > 0 && templates === 0)
    return [
      {
        key: '--stack-egress-template',
        given: '(missing)',
        expected: "with --stack-egress-proxy, the stack's proxy template (alias or ID)",
      },
    ];
  return [];
}

export async function run(argv: string[]): Promise<number> {
  const { values: flags, help } = parseFlags('platform', argv, FLAGS);
  if (help) {
    console.log(HELP);
    return 0;
  }
  const issues = [...fleetIssues(flags), ...stackEgressIssues(flags)];
  if (issues.length > 0) throw new UsageError('platform', issues);
  const limits = limitsFromFlags(flags);
  const log = (line: string) => console.error(`platform: ${line}`);
  const hostID = flags['host-id'];
  const advertise = flags['advertise-url'];
  const platform = await startPlatformOnHost({
    stateDir: flags['state-dir'],
    host: flags.host,
    port: flags.port,
    runtime: flags.runtime,
    runscPlatform: flags['runsc-platform'],
    redisUrl: flags.redis,
    redisPassword: readSecretFile(flags['redis-password-file']),
    catalogPassword: readSecretFile(flags['catalog-password-file']),
    apiKeyFile: flags['api-key-file'],
    catalog: flags.catalog,
    domain: flags.domain,
    sandboxSubnet: flags['sandbox-subnet'],
    routeOut: flags['route-out'],
    buildLimits: {
      deadlineSeconds: flags['build-deadline-seconds'],
      logLineBytes: flags['build-log-line-bytes'],
      logBytes: flags['build-log-bytes'],
      concurrent: flags['concurrent-builds'],
      stepDiskMB: flags['build-step-disk-mb'],
    },
    gc: { intervalSeconds: flags['gc-interval-seconds'], keepUnusedSeconds: flags['gc-keep-unused-seconds'] },
    ...(flags['volumes-dir'] !== undefined ? { volumesDir: flags['volumes-dir'] } : {}),
    ...(flags['warm-pool'].length > 0 ? { warmPool: Object.fromEntries(flags['warm-pool']) } : {}),
    ...(flags['stack-egress-template'].length > 0
      ? { stackEgress: { templates: flags['stack-egress-template'], proxy: flags['stack-egress-proxy'] } }
      : {}),
    limits,
    disks: !flags['no-sandbox-disks'],
    ...(hostID !== undefined && advertise !== undefined
      ? { fleet: { hostID, apiUrl: advertise.replace(/\/$/, ''), redisUrl: flags.catalog, capacity: flags.capacity } }
      : {}),
    log,
  });
  let gateway: RunningGateway | undefined;
  try {
    if (flags.catalog === 'memory' || flags['gateway-port'] !== undefined) {
      gateway = await startGateway({
        catalog: platform.catalog,
        host: flags.host,
        port: flags['gateway-port'] ?? 0,
        domain: flags.domain,
        // Sandboxes created with autoResume are resumed by their first request, for the default time.
        resumeSandbox: async (sandboxID) => void (await platform.sandboxes.connect(sandboxID, DEFAULT_TIMEOUT_SECONDS)),
        log: (line) => console.error(`gateway: ${line}`),
      });
    }
  } catch (err) {
    await platform.close();
    throw err;
  }
  // Listen for the stop signals before announcing: whoever reads the lines may signal at once.
  const stopped = untilStopSignal();
  console.log(`platform API listening on ${platform.url}`);
  console.log(`export E2B_API_URL=${platform.url}`);
  console.log(`export E2B_VOLUME_API_URL=${platform.url}`);
  if (gateway) console.log(`export E2B_SANDBOX_URL=http://${flags.host}:${gateway.port}`);
  console.log(`export E2B_API_KEY=$(head -n 1 ${platform.apiKeyFile})`);
  await stopped;
  log('stopping (sandboxes keep running)');
  await gateway?.close();
  await platform.close();
  return 0;
}
