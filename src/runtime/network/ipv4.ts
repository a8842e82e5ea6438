/** IPv4 arithmetic for address allocation on a sandbox subnet. Pure. */

export function ipToInt(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255))
    throw new Error(`invalid IPv4 address ${JSON.stringify(ip)}`);
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export interface Subnet {
  network: number;
  prefix: number;
}

export function parseSubnet(cidr: string): Subnet {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d{1,2})$/.exec(cidr);
  const prefix = m ? Number(m[2]) : NaN;
  if (!m || prefix < 8 || prefix > 30) throw new Error(`invalid subnet ${JSON.stringify(cidr)}: expected a.b.c.d/n with n from 8 to 30`);
  const size = 2 ** (32 - prefix);
  const network = ipToInt(m[1]!);
  if (network % size !== 0) throw new Error(`invalid subnet ${cidr}: host bits are set`);
  return { network, prefix };
}

/** The lowest host address of `subnet` that is not in `taken` (network and broadcast never count as hosts). */
export function firstFreeAddress(subnet: Subnet, taken: ReadonlySet<string>): string | undefined {
  const size = 2 ** (32 - subnet.prefix);
  for (let i = 1; i < size - 1; i++) {
    const ip = intToIp(subnet.network + i);
    if (!taken.has(ip)) return ip;
  }
  return undefined;
}
