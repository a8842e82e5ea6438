import { DEBIAN_AMI_OWNER } from './constants';

/** Pure helpers for where the host lands and which image it boots. */

/** Filters for the official Debian 12 images of one architecture. */
export function debianAmiQuery(architecture: 'amd64' | 'arm64') {
  return {
    owners: [DEBIAN_AMI_OWNER],
    mostRecent: true,
    filters: [
      { name: 'name', values: [`debian-12-${architecture}-*`] },
      { name: 'architecture', values: [architecture === 'amd64' ? 'x86_64' : 'arm64'] },
      { name: 'virtualization-type', values: ['hvm'] },
      { name: 'root-device-type', values: ['ebs'] },
    ],
  };
}

/** A deterministic choice among candidate subnets, so a re-run never moves the host. */
export function pickSubnet(ids: readonly string[], where: string): string {
  if (ids.length === 0) {
    throw new Error(`no subnet found ${where}; set sandbox-kit:host.subnetId to a subnet of your VPC`);
  }
  return [...ids].sort()[0];
}

/** Every IPv4 block of the VPC: the proxy refuses them as destinations (the host's own networks). */
export function vpcNetworks(vpc: { cidrBlock: string; cidrBlockAssociations?: ReadonlyArray<{ cidrBlock: string }> }): string[] {
  const blocks = [vpc.cidrBlock, ...(vpc.cidrBlockAssociations ?? []).map((a) => a.cidrBlock)];
  return [...new Set(blocks.filter((b) => b !== ''))];
}

/** The network interface's secondary address: its private addresses minus the primary one. */
export function secondaryPrivateIp(primary: string, all: readonly string[]): string {
  const others = all.filter((ip) => ip !== primary);
  if (others.length !== 1) {
    throw new Error(
      `expected exactly one secondary private IP on the host's network interface, found ${others.length} (${all.join(', ')})`,
    );
  }
  return others[0];
}
