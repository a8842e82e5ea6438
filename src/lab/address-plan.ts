/**
 * The lab's address plan, as one pure value. Inside addresses come from 198.18.0.0/15, "public" ones from
 * 203.0.113.0/24 (TEST-NET-3).
 *
 *   web (203.0.113.1: what-is-my-IP, UDP echo)
 *     |  public segment 203.0.113.0/24, a bridge in `inet`
 *   inet = the edge router; owns the Elastic IPs and maps them 1:1 to private addresses
 *     |  proxy subnet 198.18.1.0/24 (the "VPC")          |  public segment
 *   proxy (198.18.1.10 primary, 198.18.1.11 egress)      sbhost (203.0.113.100, NAT for the sandboxes)
 *                                                           |  sandbox subnet 198.18.2.0/24, a bridge in `sbhost`
 *                                                         sb1 (198.18.2.11), sb2 (198.18.2.12), ...
 *
 * The edge also answers on 198.18.1.1 and 169.254.169.254 (a service in the proxy's private network and a
 * cloud-metadata stand-in) so the tests can show the proxy refuses to reach them.
 */
export interface AddressPlan {
  publicPrefix: number;
  /** The edge router's own address on the public segment: everyone's default gateway there. */
  edgePublic: string;
  /** What-is-my-IP HTTP (80) and UDP echo (7). */
  web: string;
  webHttpPort: number;
  webUdpPort: number;
  /** The sandbox host's public address: what a direct request from a sandbox shows. */
  sandboxHostPublic: string;

  proxySubnet: string;
  proxyPrefix: number;
  edgePrivate: string;
  proxyPrimary: string;
  /** Secondary private address ss-server binds outbound connections to (placed by the rendered egress-address.sh). */
  proxyEgress: string;
  /** Ingress Elastic IP: what clients dial. */
  ingressEip: string;
  /** Egress Elastic IP at lab start: what the world sees. Re-pointing moves it to another public address. */
  egressEip: string;
  /** Cloud metadata stand-in, served by the edge. */
  metadata: string;

  sandboxSubnet: string;
  sandboxPrefix: number;
  sandboxGateway: string;

  /** Optional link from the root namespace into the sandbox host (root side, sandbox-host side, prefix). */
  hostLinkRoot: string;
  hostLinkLab: string;
  hostLinkPrefix: number;
}

export const ADDRESS_PLAN: AddressPlan = {
  publicPrefix: 24,
  edgePublic: '203.0.113.254',
  web: '203.0.113.1',
  webHttpPort: 80,
  webUdpPort: 7,
  sandboxHostPublic: '203.0.113.100',

  proxySubnet: '198.18.1.0/24',
  proxyPrefix: 24,
  edgePrivate: '198.18.1.1',
  proxyPrimary: '198.18.1.10',
  proxyEgress: '198.18.1.11',
  ingressEip: '203.0.113.10',
  egressEip: '203.0.113.20',
  metadata: '169.254.169.254',

  sandboxSubnet: '198.18.2.0/24',
  sandboxPrefix: 24,
  sandboxGateway: '198.18.2.1',

  hostLinkRoot: '198.18.0.1',
  hostLinkLab: '198.18.0.2',
  hostLinkPrefix: 30,
};

/** At most 200 sandboxes: addresses .11 to .210 of the sandbox subnet. */
export const MAX_SANDBOXES = 200;

export function sandboxAddress(index: number, plan: AddressPlan = ADDRESS_PLAN): string {
  if (!Number.isInteger(index) || index < 1 || index > MAX_SANDBOXES) {
    throw new Error(`sandbox index ${index} out of range: expected an integer from 1 to ${MAX_SANDBOXES}`);
  }
  const base = plan.sandboxSubnet.split('/')[0]!.split('.').slice(0, 3).join('.');
  return `${base}.${10 + index}`;
}

const PUBLIC = /^203\.0\.113\.(\d{1,3})$/;

/** Public addresses the lab may hand out as Elastic IPs: 203.0.113.0/24 minus the ones the plan already uses. */
export function checkElasticIp(address: string, plan: AddressPlan = ADDRESS_PLAN): string {
  const m = PUBLIC.exec(address);
  const last = m ? Number(m[1]) : NaN;
  if (!m || last < 1 || last > 254) {
    throw new Error(`invalid Elastic IP ${JSON.stringify(address)}: expected an address in 203.0.113.1-203.0.113.254`);
  }
  const taken = [plan.edgePublic, plan.web, plan.sandboxHostPublic, plan.ingressEip];
  if (taken.includes(address)) throw new Error(`Elastic IP ${address} is already used by the lab (taken: ${taken.join(', ')})`);
  return address;
}

/** The next free public address after `current`, for a rotation without an explicit address. */
export function nextElasticIp(current: string, plan: AddressPlan = ADDRESS_PLAN): string {
  const start = Number(current.split('.')[3]);
  for (let i = 1; i < 254; i++) {
    const candidate = `203.0.113.${((start - 1 + i) % 253) + 1}`;
    try {
      return checkElasticIp(candidate, plan);
    } catch {
      // taken by the plan; try the next one
    }
  }
  throw new Error('no free public address left in 203.0.113.0/24');
}
