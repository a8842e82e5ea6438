import type { StackConfig } from '../src/config';
import { NFS_PORT, REDIS_PORT } from './constants';
import { SSH_PORT } from './security-rules';

/** Which security group a sandbox-side rule belongs to, and which group a rule may name as its source. */
export type SandboxGroup = 'host' | 'gateway' | 'redis' | 'volumes';

/** One ingress rule: one port range from one CIDR or from another of the stack's groups. */
export interface SandboxRule {
  /** Stable resource-name suffix. */
  key: string;
  group: SandboxGroup;
  fromPort: number;
  toPort: number;
  source: { cidr: string } | { group: SandboxGroup };
  description: string;
}

export interface SandboxRuleOptions {
  /** hosts > 1: gateways and Redis are their own groups. */
  fleet: boolean;
  /** A load balancer sits in front (fleet, or a domain with TLS): its health checks and TLS connections come from the VPC. */
  loadBalanced: boolean;
  /** The VPC's blocks. */
  vpcNetworks: readonly string[];
}

const cidrKey = (cidr: string) => cidr.replace(/[./]/g, '-');
const unique = (values: readonly string[]) => [...new Set(values)];

/**
 * The sandbox side's firewall, ingress only (egress is open: packages, the bundle, the proxy, sandboxes' traffic).
 * The API port from apiCidrs, the gateway port from gatewayCidrs, SSH from the admin CIDRs (never wider than /8, the
 * schema refuses more), and in a fleet: gateways to every TCP port of the hosts (sandbox ports), the hosts to each
 * other's API, hosts and gateways to Redis. Behind a load balancer the VPC reaches the API and gateway ports too (health checks, TLS termination).
 */
export function sandboxRules(config: StackConfig, options: SandboxRuleOptions): SandboxRule[] {
  const rules: SandboxRule[] = [];
  const { apiPort, apiCidrs, gatewayCidrs } = config.sandboxHost;
  const gatewayPort = config.gateway.port;
  const gatewayGroup: SandboxGroup = options.fleet ? 'gateway' : 'host';
  const extra = options.loadBalanced ? options.vpcNetworks : [];
  for (const cidr of unique([...apiCidrs, ...extra])) {
    rules.push({
      key: `api-${cidrKey(cidr)}`,
      group: 'host',
      fromPort: apiPort,
      toPort: apiPort,
      source: { cidr },
      description: `platform API ${apiPort} from ${cidr}`,
    });
  }
  for (const cidr of unique([...gatewayCidrs, ...extra])) {
    rules.push({
      key: `gateway-${cidrKey(cidr)}`,
      group: gatewayGroup,
      fromPort: gatewayPort,
      toPort: gatewayPort,
      source: { cidr },
      description: `sandbox gateway ${gatewayPort} from ${cidr}`,
    });
  }
  for (const cidr of unique(config.host.adminCidrs)) {
    for (const group of options.fleet ? (['host', 'gateway'] as const) : (['host'] as const)) {
      rules.push({
        key: `${group}-ssh-${cidrKey(cidr)}`,
        group,
        fromPort: SSH_PORT,
        toPort: SSH_PORT,
        source: { cidr },
        description: `SSH from ${cidr}`,
      });
    }
  }
  if (options.fleet) {
    rules.push({
      key: 'sandboxes-from-gateways',
      group: 'host',
      fromPort: 0,
      toPort: 65535,
      source: { group: 'gateway' },
      description: 'gateways to sandbox ports',
    });
    // Any host answers any API call and passes on what another host holds (src/platform/fleet).
    rules.push({
      key: 'api-from-hosts',
      group: 'host',
      fromPort: apiPort,
      toPort: apiPort,
      source: { group: 'host' },
      description: `platform API ${apiPort} between the hosts`,
    });
    for (const from of ['host', 'gateway'] as const) {
      rules.push({
        key: `redis-from-${from}s`,
        group: 'redis',
        fromPort: REDIS_PORT,
        toPort: REDIS_PORT,
        source: { group: from },
        description: `Redis from the ${from}s`,
      });
    }
    // The volumes file system (EFS): NFS from the hosts only; sandboxes and gateways never reach it.
    rules.push({
      key: 'nfs-from-hosts',
      group: 'volumes',
      fromPort: NFS_PORT,
      toPort: NFS_PORT,
      source: { group: 'host' },
      description: `NFS ${NFS_PORT} (the volumes file system) from the hosts`,
    });
  }
  return rules;
}
