/** Where each artifact lives on the proxy host and inside a sandbox. One table, used by render, infra, lab and verify. */
export const HOST_PATHS = {
  serverConfig: '/etc/sandbox-kit/ss-server.json',
  serverAcl: '/etc/sandbox-kit/server.acl',
  sysctl: '/etc/sysctl.d/90-sandbox-kit.conf',
  unit: '/etc/systemd/system/ss-server.service',
  // Under /etc with the rest, so a lab can overlay every host file with one directory.
  egressAddressScript: '/etc/sandbox-kit/egress-address.sh',
  ssServer: '/usr/bin/ss-server',
} as const;

/** Inside a sandbox, the client files sit in one directory (overridable by SANDBOX_KIT_DIR for side-by-side labs). */
export const SANDBOX_DIR = '/etc/sandbox-kit';
export const SANDBOX_RUN_DIR = '/run/sandbox-kit';

export const UNIT_NAME = 'ss-server.service';
/** Debian's package ships its own unit on port 8388 with a default config; it must not run next to ours. */
export const DEBIAN_DEFAULT_UNIT = 'shadowsocks-libev.service';
/** Name of the NAT chain created in transparent mode. */
export const NAT_CHAIN = 'SANDBOX_KIT';
