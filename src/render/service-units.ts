import { limitFlags, type StackConfig } from '../config';
import { SANDBOX_HOST_PATHS as P, SANDBOX_UNITS } from './sandbox-host-paths';

/** What a platform process needs to be told; secrets are never here, only the paths of their 0600 files. */
export interface PlatformServiceOptions {
  /** `--catalog` spec shared with the gateway(s): the local Redis on a single host, ElastiCache in a fleet. */
  catalog: string;
  /** `--redis`: where the platform keeps its state (another database of the same Redis). */
  state: string;
  /** The file holding the catalog's Redis password: the host's own (single host) or the fleet's auth token. */
  catalogPasswordFile: string;
  /**
   * A fleet host: its ID, address and sandbox subnet come from the instance metadata at boot (P.hostFacts, written by
   * the network unit) into the command line; other hosts reach its API at that address.
   */
  fleet?: boolean;
  /** `--volumes-dir`: the shared volumes file system's mount (a fleet host); absent: under the state dir. */
  volumesDir?: string;
  /**
   * The stack's proxy's ingress address: with `proxy.port` and the proxy template's alias it pins that template's
   * sandboxes to the proxy (`--stack-egress-*`), as `sandbox-kit up` does on the local system.
   */
  proxyIngressIp: string;
}

export interface GatewayServiceOptions {
  catalog: string;
  /** The file holding the catalog Redis's password. */
  catalogPasswordFile: string;
  /** The platform API the gateway resumes paused sandboxes through. */
  resumeUrl: string;
  /** The platform API for requests to `api.{domain}`: `HOST:PORT` on this host, or a fleet's API URL (http(s)://HOST:PORT). */
  apiUpstream?: string;
}

/** systemd's `${NAME}` in a command line: one word, NAME's value from the unit's environment (P.hostFacts). */
export function unitVariable(name: string): string {
  return `\${${name}}`;
}

function line(argv: readonly string[]): string {
  // Every argument is a path, a number, a URL or a name from validated config: none holds a space or a quote. A
  // `${NAME}` is systemd's: it becomes one word, the value of NAME from the unit's environment.
  for (const arg of argv)
    if (!/^[A-Za-z0-9_./:@=,+-]+$/.test(arg.replace(/\$\{[A-Z_]+\}/g, 'x')))
      throw new Error(`unit argument ${JSON.stringify(arg)} would need quoting`);
  return argv.join(' ');
}

/** The stack's runtime choice as platform flags; none for the default (auto). */
function runtimeFlags(config: StackConfig): string[] {
  const { runtime, runscPlatform } = config.sandboxHost;
  if (runtime === 'auto') return [];
  return ['--runtime', runtime, ...(runtime === 'runsc' ? ['--runsc-platform', runscPlatform] : [])];
}

/**
 * `sandbox-kit platform` as the host runs it: the E2B-compatible API, the runtime and the template builder, with
 * the API key read from its 0600 file, its state and the catalog in Redis (the gateway reads the catalog there).
 */
export function platformCommand(config: StackConfig, options: PlatformServiceOptions): string[] {
  return [
    P.node,
    P.cli,
    'platform',
    '--port',
    String(config.sandboxHost.apiPort),
    '--host',
    '0.0.0.0',
    '--state-dir',
    P.platformState,
    '--redis',
    options.state,
    '--redis-password-file',
    P.redisPassword,
    '--catalog',
    options.catalog,
    '--catalog-password-file',
    options.catalogPasswordFile,
    '--api-key-file',
    P.apiKey,
    '--domain',
    config.gateway.domain,
    // The sandboxes leave through this host, whose network unit filters and NATs them.
    '--route-out',
    '--build-deadline-seconds',
    String(config.builds.deadlineSeconds),
    '--build-log-line-bytes',
    String(config.builds.logLineBytes),
    '--build-log-bytes',
    String(config.builds.logBytes),
    '--concurrent-builds',
    String(config.builds.concurrent),
    '--build-step-disk-mb',
    String(config.builds.stepDiskMB),
    ...Object.entries(config.sandboxHost.warmPool).flatMap(([template, n]) => ['--warm-pool', `${template}=${n}`]),
    '--gc-interval-seconds',
    String(config.gc.intervalSeconds),
    '--gc-keep-unused-seconds',
    String(config.gc.keepUnusedSeconds),
    ...runtimeFlags(config),
    // The proxy template's sandboxes reach the proxy's ingress address and port, nothing else (docs/network.md).
    '--stack-egress-template',
    config.template.alias,
    '--stack-egress-proxy',
    `${options.proxyIngressIp}:${config.proxy.port}`,
    ...(options.volumesDir ? ['--volumes-dir', options.volumesDir] : []),
    ...limitFlags(config.limits),
    ...(options.fleet
      ? [
          '--sandbox-subnet',
          unitVariable('SANDBOX_SUBNET'),
          '--host-id',
          unitVariable('HOST_ID'),
          '--advertise-url',
          `http://${unitVariable('HOST_ADDRESS')}:${config.sandboxHost.apiPort}`,
        ]
      : []),
  ];
}

/** `sandbox-kit gateway` as the host runs it (every flag is one the gateway command takes today). */
export function gatewayCommand(config: StackConfig, options: GatewayServiceOptions): string[] {
  return [
    P.node,
    P.cli,
    'gateway',
    '--port',
    String(config.gateway.port),
    '--host',
    '0.0.0.0',
    '--catalog',
    options.catalog,
    '--catalog-password-file',
    options.catalogPasswordFile,
    '--brand',
    config.brand,
    '--domain',
    config.gateway.domain,
    '--resume-url',
    options.resumeUrl,
    '--api-key-file',
    P.apiKey,
    ...(options.apiUpstream ? ['--api-upstream', options.apiUpstream] : []),
  ];
}

/**
 * The platform's unit. It runs as root (it drives crun, mounts overlays, makes network namespaces) without
 * NoNewPrivileges, which every sandbox process would inherit (sudo inside a sandbox must work). Delegate lets the
 * runtime manage its sandboxes' cgroups; KillMode=process keeps sandboxes running across a platform restart (the
 * platform reconciles with the runtime's state when it starts again).
 */
export function renderPlatformUnit(config: StackConfig, options: PlatformServiceOptions & { localRedis: boolean }): string {
  const after = [SANDBOX_UNITS.network, ...(options.localRedis ? [SANDBOX_UNITS.redis] : [])];
  return `[Unit]
Description=sandbox-kit platform API and sandbox runtime
Wants=network-online.target
After=network-online.target ${after.join(' ')}
Requires=${after.join(' ')}
${options.volumesDir ? `RequiresMountsFor=${options.volumesDir}\n` : ''}
# The data volume (sandbox disks, layers) is mounted before the platform starts (fstab, render/data-volume.ts).
RequiresMountsFor=${P.state}

[Service]
Type=simple
ExecStart=${line(platformCommand(config, options))}
Restart=always
RestartSec=2
LimitNOFILE=65536
TasksMax=infinity
Delegate=yes
KillMode=process
Environment=NODE_ENV=production
EnvironmentFile=-${P.platformEnv}
${
  options.fleet
    ? `EnvironmentFile=${P.hostFacts}
`
    : ''
}
[Install]
WantedBy=multi-user.target
`;
}

/** The gateway's unit: it only reads the catalog and forwards bytes, so the file system is read-only to it. */
export function renderGatewayUnit(config: StackConfig, options: GatewayServiceOptions & { after: readonly string[] }): string {
  const after = ['network-online.target', ...options.after];
  return `[Unit]
Description=sandbox-kit shared sandbox gateway
Wants=network-online.target
After=${after.join(' ')}

[Service]
Type=simple
ExecStart=${line(gatewayCommand(config, options))}
Restart=always
RestartSec=2
LimitNOFILE=65536
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
Environment=NODE_ENV=production

[Install]
WantedBy=multi-user.target
`;
}

/** The sandbox network's forwarding, filter and NAT rules as a oneshot unit the platform requires. */
export function renderNetworkUnit(): string {
  return `[Unit]
Description=sandbox-kit sandbox network (forwarding, filter rules, NAT)
Wants=network-online.target
After=network-online.target
Before=${SANDBOX_UNITS.platform}

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=${P.networkScript} up
ExecStop=${P.networkScript} down

[Install]
WantedBy=multi-user.target
`;
}

/** `sandbox-kit` for an admin shell: the bundle run by the host's node. */
export function renderCliWrapper(): string {
  return `#!/bin/sh
# sandbox-kit, from the release bundle in ${P.lib}.
exec ${P.node} ${P.cli} "$@"
`;
}

/**
 * Run at boot before the services: makes the host's Redis password once (0600, never in user-data or on a command
 * line) and has Debian's redis-server require it, through a config piece its redis.conf includes. Idempotent.
 */
export function renderRedisAuthScript(): string {
  return `#!/bin/sh
# Makes the host's Redis password (once) and has redis-server require it; restart redis-server afterwards.
set -eu
umask 077
if [ ! -s ${P.redisPassword} ]; then
  head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40 > ${P.redisPassword}.new
  mv ${P.redisPassword}.new ${P.redisPassword}
fi
chmod 0600 ${P.redisPassword}
printf 'requirepass %s\\n' "$(cat ${P.redisPassword})" > ${P.redisConf}.new
if id redis >/dev/null 2>&1; then chown redis:redis ${P.redisConf}.new; fi
chmod 0600 ${P.redisConf}.new
mv ${P.redisConf}.new ${P.redisConf}
grep -qxF 'include ${P.redisConf}' ${P.debianRedisConf} || printf '\\ninclude ${P.redisConf}\\n' >> ${P.debianRedisConf}
`;
}
