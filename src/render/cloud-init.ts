import { stringify } from 'yaml';
import type { StackConfig } from '../config';
import { renderEgressAddressScript } from './egress-address';
import { DEBIAN_DEFAULT_UNIT, HOST_PATHS, UNIT_NAME } from './paths';
import { renderServerAcl } from './server-acl';
import { renderServerConfig } from './server-config';
import { renderServerUnit } from './server-unit';
import { renderSysctl } from './sysctl';

export interface ProxyHostInputs {
  password: string;
  /** Private address for outbound connections (dedicated egress); absent in shared mode. */
  egressBindAddress?: string;
  /** The host's own networks, refused as proxy destinations (e.g. the VPC CIDR). */
  hostNetworks?: readonly string[];
}

interface WrittenFile {
  path: string;
  permissions: string;
  owner: string;
  content: string;
}

/** The files the proxy host needs, with their modes: the single list cloud-init writes and the lab installs. */
export function proxyHostFiles(config: StackConfig, inputs: ProxyHostInputs): WrittenFile[] {
  const files: WrittenFile[] = [
    { path: HOST_PATHS.serverConfig, permissions: '0600', owner: 'root:root', content: renderServerConfig(config.proxy, inputs.password) },
    { path: HOST_PATHS.serverAcl, permissions: '0644', owner: 'root:root', content: renderServerAcl(config.proxy, inputs.hostNetworks) },
    { path: HOST_PATHS.sysctl, permissions: '0644', owner: 'root:root', content: renderSysctl(config.proxy) },
    {
      path: HOST_PATHS.unit,
      permissions: '0644',
      owner: 'root:root',
      content: renderServerUnit({ egressBindAddress: inputs.egressBindAddress }),
    },
  ];
  if (inputs.egressBindAddress) {
    files.push({
      path: HOST_PATHS.egressAddressScript,
      permissions: '0755',
      owner: 'root:root',
      content: renderEgressAddressScript(inputs.egressBindAddress),
    });
  }
  return files;
}

/**
 * cloud-init user-data for a Debian 12 proxy host: install shadowsocks-libev, write the files, apply the sysctls,
 * stop Debian's default unit (it would take the same port with a default config), enable ours.
 */
export function renderCloudInit(config: StackConfig, inputs: ProxyHostInputs): string {
  const doc = {
    package_update: true,
    packages: ['shadowsocks-libev'],
    write_files: proxyHostFiles(config, inputs),
    runcmd: [
      'modprobe tcp_bbr',
      `sysctl --load ${HOST_PATHS.sysctl}`,
      `systemctl disable --now ${DEBIAN_DEFAULT_UNIT}`,
      'systemctl daemon-reload',
      `systemctl enable --now ${UNIT_NAME}`,
    ],
  };
  return `#cloud-config\n${stringify(doc, { lineWidth: 0, blockQuote: 'literal' })}`;
}
