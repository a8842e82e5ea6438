/**
 * Elastic IP emulation at the lab's edge: each mapping is a 1:1 NAT between a public and a private address, both
 * ways (DNAT for traffic to the public address, SNAT for traffic from the private one), as AWS does for an EIP
 * associated with a private IP. The rules live in two chains of the edge namespace; re-pointing rewrites both chains
 * in one iptables-restore transaction, the way re-associating an EIP is one API call.
 */
export interface ElasticIpMapping {
  publicAddress: string;
  privateAddress: string;
}

export const EIP_CHAIN_IN = 'SK_EIP_IN';
export const EIP_CHAIN_OUT = 'SK_EIP_OUT';

/** iptables-restore input (use with --noflush) that replaces the content of both chains with `mappings`. */
export function eipRestoreScript(mappings: readonly ElasticIpMapping[]): string {
  const publics = new Set<string>();
  const privates = new Set<string>();
  for (const m of mappings) {
    if (publics.has(m.publicAddress)) throw new Error(`Elastic IP ${m.publicAddress} is mapped twice`);
    if (privates.has(m.privateAddress)) throw new Error(`private address ${m.privateAddress} has two Elastic IPs`);
    publics.add(m.publicAddress);
    privates.add(m.privateAddress);
  }
  const lines = [
    '*nat',
    // Declaring a user chain under --noflush empties it, so the rules below replace the old ones.
    `:${EIP_CHAIN_IN} - [0:0]`,
    `:${EIP_CHAIN_OUT} - [0:0]`,
    ...mappings.map((m) => `-A ${EIP_CHAIN_IN} -d ${m.publicAddress}/32 -j DNAT --to-destination ${m.privateAddress}`),
    ...mappings.map((m) => `-A ${EIP_CHAIN_OUT} -s ${m.privateAddress}/32 -j SNAT --to-source ${m.publicAddress}`),
    'COMMIT',
    '',
  ];
  return lines.join('\n');
}

/** The jumps into the EIP chains, added once when the edge is built (argv for `iptables`). */
export function eipJumpRules(): string[][] {
  return [
    ['-t', 'nat', '-A', 'PREROUTING', '-j', EIP_CHAIN_IN],
    ['-t', 'nat', '-A', 'POSTROUTING', '-j', EIP_CHAIN_OUT],
  ];
}
