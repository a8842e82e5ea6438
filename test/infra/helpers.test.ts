import { loadStackConfig } from '../../src/config';
import { debianAmiQuery, pickSubnet, secondaryPrivateIp, vpcNetworks } from '../../infra/placement';
import { proxyProtocols, securityRules } from '../../infra/security-rules';
import { DEBIAN_AMI_OWNER } from '../../infra/constants';

describe('securityRules', () => {
  it('opens only the protocols the server serves', () => {
    expect(proxyProtocols('tcp_and_udp')).toEqual(['tcp', 'udp']);
    expect(proxyProtocols('tcp_only')).toEqual(['tcp']);
    expect(proxyProtocols('udp_only')).toEqual(['udp']);
    const tcpOnly = securityRules(loadStackConfig({ proxy: { mode: 'tcp_only' } }));
    expect(tcpOnly.filter((r) => r.direction === 'ingress').map((r) => r.ipProtocol)).toEqual(['tcp']);
  });

  it('gives every rule a distinct name that does not depend on the other CIDRs', () => {
    const one = securityRules(loadStackConfig({ host: { clientCidrs: ['192.0.2.0/24'], adminCidrs: ['198.51.100.7/32'] } }));
    const two = securityRules(loadStackConfig({ host: { clientCidrs: ['0.0.0.0/0', '192.0.2.0/24'], adminCidrs: ['198.51.100.7/32'] } }));
    expect(new Set(two.map((r) => r.key)).size).toBe(two.length);
    // Adding a CIDR adds rules; the rules of the CIDR already there keep their names (no replacement).
    for (const rule of one) expect(two.map((r) => r.key)).toContain(rule.key);
  });

  it('writes one rule per CIDR even when a CIDR is listed twice', () => {
    const rules = securityRules(loadStackConfig({ host: { clientCidrs: ['192.0.2.0/24', '192.0.2.0/24'] } }));
    expect(rules.filter((r) => r.ipProtocol === 'tcp')).toHaveLength(1);
  });
});

describe('placement helpers', () => {
  it('queries the official Debian 12 images of the chosen architecture', () => {
    const amd = debianAmiQuery('amd64');
    expect(amd.owners).toEqual([DEBIAN_AMI_OWNER]);
    expect(amd.mostRecent).toBe(true);
    expect(amd.filters).toContainEqual({ name: 'name', values: ['debian-12-amd64-*'] });
    expect(amd.filters).toContainEqual({ name: 'architecture', values: ['x86_64'] });
    expect(debianAmiQuery('arm64').filters).toContainEqual({ name: 'architecture', values: ['arm64'] });
  });

  it('picks the same subnet whatever order AWS lists them in', () => {
    expect(pickSubnet(['subnet-0b', 'subnet-0a', 'subnet-0c'], 'x')).toBe('subnet-0a');
    expect(pickSubnet(['subnet-0c', 'subnet-0a', 'subnet-0b'], 'x')).toBe('subnet-0a');
    expect(() => pickSubnet([], 'in the default VPC')).toThrow(/no subnet found in the default VPC; set sandbox-kit:host.subnetId/);
  });

  it('lists every IPv4 block of the VPC once', () => {
    expect(
      vpcNetworks({ cidrBlock: '10.0.0.0/16', cidrBlockAssociations: [{ cidrBlock: '10.0.0.0/16' }, { cidrBlock: '100.64.0.0/22' }] }),
    ).toEqual(['10.0.0.0/16', '100.64.0.0/22']);
  });

  it('finds the secondary address whatever order the interface lists them in', () => {
    expect(secondaryPrivateIp('10.0.0.5', ['10.0.0.9', '10.0.0.5'])).toBe('10.0.0.9');
    expect(secondaryPrivateIp('10.0.0.5', ['10.0.0.5', '10.0.0.9'])).toBe('10.0.0.9');
    expect(() => secondaryPrivateIp('10.0.0.5', ['10.0.0.5'])).toThrow(/exactly one secondary private IP/);
  });
});
