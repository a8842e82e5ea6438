import { proxyProtocols, type StackConfig } from '../src/config';

/** One security-group rule: one port range, one protocol, one IPv4 CIDR (one AWS rule resource each). */
export interface SecurityRule {
  /** Stable resource-name suffix: adding or removing a CIDR never renames the other rules. */
  key: string;
  direction: 'ingress' | 'egress';
  /** `tcp`, `udp`, or `-1` for every protocol. */
  ipProtocol: 'tcp' | 'udp' | '-1';
  fromPort?: number;
  toPort?: number;
  cidrIpv4: string;
  description: string;
}

export const SSH_PORT = 22;

function cidrKey(cidr: string): string {
  return cidr.replace(/[./]/g, '-');
}

export { proxyProtocols };

/**
 * The proxy host's firewall: the proxy port per protocol from each client CIDR, SSH only from the admin CIDRs
 * (none when none are configured), and all outbound traffic (the proxy connects anywhere; its ACL refuses private space).
 */
export function securityRules(config: StackConfig): SecurityRule[] {
  const rules: SecurityRule[] = [];
  const port = config.proxy.port;
  for (const protocol of proxyProtocols(config.proxy.mode)) {
    for (const cidr of unique(config.host.clientCidrs)) {
      rules.push({
        key: `proxy-${protocol}-${cidrKey(cidr)}`,
        direction: 'ingress',
        ipProtocol: protocol,
        fromPort: port,
        toPort: port,
        cidrIpv4: cidr,
        description: `Shadowsocks ${protocol.toUpperCase()} ${port} from ${cidr}`,
      });
    }
  }
  for (const cidr of unique(config.host.adminCidrs)) {
    rules.push({
      key: `ssh-${cidrKey(cidr)}`,
      direction: 'ingress',
      ipProtocol: 'tcp',
      fromPort: SSH_PORT,
      toPort: SSH_PORT,
      cidrIpv4: cidr,
      description: `SSH from ${cidr}`,
    });
  }
  rules.push({ key: 'egress-all', direction: 'egress', ipProtocol: '-1', cidrIpv4: '0.0.0.0/0', description: 'All outbound traffic' });
  return rules;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
