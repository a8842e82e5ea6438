/**
 * Where the kit lives on a sandbox host (single host, fleet host or fleet gateway). One table, used by render, infra,
 * the lab's layout of the bundle and verify. The release bundle goes to /opt/sandbox-kit, config and secrets to
 * /etc/sandbox-kit (0600 for secrets), state to /var/lib/sandbox-kit.
 */
export const SANDBOX_HOST_PATHS = {
  root: '/opt/sandbox-kit',
  /** Marks the release root: the runtime finds the agent bundle at <root>/dist/bundle, as in a checkout. */
  rootMarker: '/opt/sandbox-kit/package.json',
  bin: '/opt/sandbox-kit/bin',
  /** The release bundle (dist/bundle of the build). */
  lib: '/opt/sandbox-kit/dist/bundle',
  /** The kit's CLI as one bundle: `platform`, `gateway`, `template build`, ... */
  cli: '/opt/sandbox-kit/dist/bundle/sandbox-kit.js',
  /** The agent bundle the runtime places, read-only, into every sandbox. */
  agent: '/opt/sandbox-kit/dist/bundle/agent.js',
  /** `sandbox-kit` on the PATH of an admin shell: a wrapper that runs the bundle with the host's node. */
  wrapper: '/opt/sandbox-kit/bin/sandbox-kit',
  node: '/usr/bin/node',
  etc: '/etc/sandbox-kit',
  /** The platform API key (secret, 0600): the platform accepts it, the gateway resumes with it, builds use it. */
  apiKey: '/etc/sandbox-kit/api-key',
  /** The host's own Redis password (secret, 0600): made at first boot by redisAuth, never in user-data. */
  redisPassword: '/etc/sandbox-kit/redis-password',
  /** Makes redisPassword (once) and has the host's Redis require it (redisConf, included by Debian's redis.conf). */
  redisAuth: '/etc/sandbox-kit/redis-auth.sh',
  /** The Redis config piece holding requirepass (readable by the redis user only). */
  redisConf: '/etc/redis/sandbox-kit.conf',
  /** Debian's Redis config, which gets one `include` line for redisConf. */
  debianRedisConf: '/etc/redis/redis.conf',
  /** A fleet's shared Redis's auth token (ElastiCache AUTH; secret, 0600): from user-data. */
  catalogPassword: '/etc/sandbox-kit/catalog-password',
  /** Expected sha256 of every bundle file, checked before anything runs. */
  bundleSums: '/etc/sandbox-kit/bundle.sha256',
  installBundle: '/etc/sandbox-kit/install-bundle.sh',
  networkScript: '/etc/sandbox-kit/sandbox-network.sh',
  /** Mounts the data volume on `state` (render/data-volume.ts), before anything writes there. */
  dataVolumeScript: '/etc/sandbox-kit/data-volume.sh',
  /** Where the template build finds the proxy client files (the client configs hold the password: 0600). */
  templateDir: '/etc/sandbox-kit/template',
  buildTemplate: '/etc/sandbox-kit/build-template.sh',
  /**
   * The platform's site settings, optional and never written by the kit: e.g. http_proxy / https_proxy / no_proxy
   * for a host whose template builds reach the Debian mirror through an HTTP proxy.
   */
  platformEnv: '/etc/sandbox-kit/platform.env',
  /**
   * A fleet host's facts from the instance metadata (HOST_ID, HOST_ADDRESS, SANDBOX_SUBNET), written at every boot by
   * the network unit before the platform starts; the platform unit's command line reads them.
   */
  hostFacts: '/run/sandbox-kit/host.env',
  state: '/var/lib/sandbox-kit',
  /** The platform's own state directory (its instance name, sandboxes' upper dirs, template layers). */
  platformState: '/var/lib/sandbox-kit/platform',
  /** A fleet host's mount of the fleet's shared volumes file system (Amazon EFS): every host mounts it here. */
  volumes: '/var/lib/sandbox-kit/volumes',
  units: '/etc/systemd/system',
} as const;

export const SANDBOX_UNITS = {
  network: 'sandbox-kit-network.service',
  platform: 'sandbox-kit-platform.service',
  gateway: 'sandbox-kit-gateway.service',
  /** Debian's own unit of redis-server: the single host's catalog, on loopback only. */
  redis: 'redis-server.service',
} as const;

/** iptables chains of the sandbox network (filter FORWARD, filter INPUT, nat POSTROUTING). */
export const SANDBOX_CHAINS = { forward: 'SANDBOX_KIT_FWD', input: 'SANDBOX_KIT_IN', nat: 'SANDBOX_KIT_NAT' } as const;
/** The single host's catalog: Debian's redis-server, which listens on loopback only. */
export const LOCAL_REDIS_CATALOG = 'redis://127.0.0.1:6379/0';
/** A host's platform state (single host or fleet host): database 1 of the host's own Redis on loopback. */
export const LOCAL_REDIS_STATE = 'redis://127.0.0.1:6379/1';
