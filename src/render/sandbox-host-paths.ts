/**
 * Where the kit lives on a sandbox host (single host, fleet host or fleet gateway). One table, used by render, infra,
 * the lab's layout of the bundle and verify. The release bundle goes to /opt/sandbox-kit, config and secrets to
 * /etc/sandbox-kit (0600 for secrets), state to /var/lib/sandbox-kit.
 */
export const SANDBOX_HOST_PATHS = {
  root: '/opt/sandbox-kit',
  bin: '/opt/sandbox-kit/bin',
  lib: '/opt/sandbox-kit/lib',
  /** The kit's CLI as one bundle: `platform`, `gateway`, `template build`, ... */
  cli: '/opt/sandbox-kit/lib/sandbox-kit.js',
  /** The agent bundle the runtime places, read-only, into every sandbox. */
  agent: '/opt/sandbox-kit/lib/agent.js',
  /** `sandbox-kit` on the PATH of an admin shell: a wrapper that runs the bundle with the host's node. */
  wrapper: '/opt/sandbox-kit/bin/sandbox-kit',
  node: '/usr/bin/node',
  etc: '/etc/sandbox-kit',
  /** The platform API key (secret, 0600): the platform accepts it, the gateway resumes with it, builds use it. */
  apiKey: '/etc/sandbox-kit/api-key',
  /** Expected sha256 of every bundle file, checked before anything runs. */
  bundleSums: '/etc/sandbox-kit/bundle.sha256',
  installBundle: '/etc/sandbox-kit/install-bundle.sh',
  networkScript: '/etc/sandbox-kit/sandbox-network.sh',
  /** Where the template build finds the proxy client files (the client configs hold the password: 0600). */
  templateDir: '/etc/sandbox-kit/template',
  buildTemplate: '/etc/sandbox-kit/build-template.sh',
  state: '/var/lib/sandbox-kit',
  /** Written by the network script: the sandbox network's CIDRs, one per line, for the platform to allocate from. */
  sandboxCidrs: '/run/sandbox-kit/sandbox-cidrs',
  units: '/etc/systemd/system',
} as const;

export const SANDBOX_UNITS = {
  network: 'sandbox-kit-network.service',
  platform: 'sandbox-kit-platform.service',
  gateway: 'sandbox-kit-gateway.service',
  /** Debian's own unit of redis-server: the single host's catalog, on loopback only. */
  redis: 'redis-server.service',
} as const;

/**
 * The name the sandbox network script gives the namespace holding the bridge (the host's own, named with
 * `ip netns attach`): the runtime's bridge network addresses the bridge through a named namespace.
 */
export const SANDBOX_HOST_NETNS = 'sandbox-kit-host';

/** The bridge every sandbox's veth joins. */
export const SANDBOX_BRIDGE = 'sk-br0';
/** iptables chains of the sandbox network (filter FORWARD, filter INPUT, nat POSTROUTING). */
export const SANDBOX_CHAINS = { forward: 'SANDBOX_KIT_FWD', input: 'SANDBOX_KIT_IN', nat: 'SANDBOX_KIT_NAT' } as const;
/** The single host's catalog: Debian's redis-server, which listens on loopback only. */
export const LOCAL_REDIS_CATALOG = 'redis://127.0.0.1:6379/0';
