/**
 * What the egress relay knows of one sandbox: its policy and the facts of its network, as one JSON file per sandbox
 * address in the relay's directory (written by the platform before the redirect is in), and the decision for one
 * connection. Pure but for the file helpers.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { matchesDomain } from '../domain-names';
import type { EgressProxy } from '../egress-policy';
import type { Endpoint } from './original-destination';
import type { TransformPolicy } from './transform';

export interface RelayPolicy {
  allowOut: string[];
  denyOut: string[];
  allowDomains: string[];
  proxy?: EgressProxy;
  /** The sandbox's resolvers: a domain rule's name is resolved with them, as the sandbox resolves it. */
  resolvers: string[];
  /** Destinations no sandbox reaches (private space, link-local, ...): the guard's list, which redirected TCP bypasses. */
  blocked: string[];
  /** Per-domain transforms of its HTTPS requests (transform.ts). */
  transforms?: TransformPolicy;
}

export function policyFile(dir: string, address: string): string {
  if (!net.isIPv4(address)) throw new Error(`not an IPv4 address: ${address}`);
  return join(dir, `${address}.json`);
}

/** Written whole or not at all (a rename), so the relay never reads half a policy. */
export function writeRelayPolicy(dir: string, address: string, policy: RelayPolicy): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = policyFile(dir, address);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(policy), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

export function removeRelayPolicy(dir: string, address: string): void {
  fs.rmSync(policyFile(dir, address), { force: true });
}

export function readRelayPolicy(dir: string, address: string): RelayPolicy | undefined {
  try {
    return JSON.parse(fs.readFileSync(policyFile(dir, address), 'utf8')) as RelayPolicy;
  } catch {
    return undefined;
  }
}

function inAny(cidrs: readonly string[], address: string): boolean {
  if (cidrs.length === 0 || !net.isIPv4(address)) return false;
  const list = new net.BlockList();
  for (const c of cidrs) {
    const [a, p] = c.split('/');
    list.addSubnet(a!, Number(p ?? 32), 'ipv4');
  }
  return list.check(address, 'ipv4');
}

export type Plan =
  | { action: 'refuse'; reason: string }
  /**
   * Connect to host:port (directly, or through the proxy when the policy has one); `verifyName`: only if host is one
   * of that name's addresses. `byName`: admitted for the name it sent, not its address (every later request of a
   * plain HTTP connection must name an allowed host too).
   */
  | { action: 'connect'; host: string; port: number; verifyName?: string; byName?: string };

/** Whether the decision for `dst` depends on the name the client sends (so the relay waits for its first bytes). */
export function needsName(p: RelayPolicy, dst: Endpoint): boolean {
  return p.allowDomains.length > 0 && !inAny(p.blocked, dst.address) && !inAny(p.allowOut, dst.address) && inAny(p.denyOut, dst.address);
}

/**
 * Allow beats deny, as E2B defines it: an allowed address or an allowed name (SNI or Host) passes, a denied address
 * is refused, anything else passes. Private space never passes. A name-allowed connection goes to the name: through
 * a proxy the proxy resolves it; directly, the relay connects only if the sandbox's destination is one of the name's
 * addresses (checked by the caller), so a Host or SNI of an allowed name sent to another address goes nowhere.
 */
export function plan(p: RelayPolicy, dst: Endpoint, name: string | undefined): Plan {
  if (inAny(p.blocked, dst.address)) return { action: 'refuse', reason: `${dst.address} is private, loopback or link-local space` };
  if (inAny(p.allowOut, dst.address)) return { action: 'connect', host: dst.address, port: dst.port };
  if (name !== undefined && matchesDomain(p.allowDomains, name)) {
    const byName = name.toLowerCase();
    return p.proxy
      ? { action: 'connect', host: byName, port: dst.port, byName }
      : { action: 'connect', host: dst.address, port: dst.port, verifyName: byName, byName };
  }
  if (inAny(p.denyOut, dst.address)) {
    return { action: 'refuse', reason: `${dst.address}:${dst.port}${name ? ` (${name})` : ''} is denied by the sandbox's egress rules` };
  }
  return { action: 'connect', host: dst.address, port: dst.port };
}
