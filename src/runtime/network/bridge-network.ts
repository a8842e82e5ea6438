/**
 * SandboxNetwork on a Linux bridge that lives in a given network namespace (the lab's sandbox host, or the
 * standalone one of host-network.ts). Each sandbox gets its own namespace `<prefix><sandboxID>` with `eth0`, one
 * end of a veth pair whose other end is a port of the bridge, lo up and a default route via the bridge's address.
 *
 * The bridge-side end carries the facts as its link alias (`sandbox-kit <namespace> <address>`), so attachments
 * and used addresses are read back from the system: they survive a platform restart, and two instances on one
 * bridge see each other's addresses.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../../util/exec';
import { checkSandboxID } from '../instance';
import type { NetworkAttachment, SandboxNetwork } from '../types';
import { firstFreeAddress, parseSubnet, type Subnet } from './ipv4';

export const NETNS_DIR = '/run/netns';
const ALIAS_TAG = 'sandbox-kit';

export interface BridgeNetworkOptions {
  /** Namespace holding the bridge, e.g. sk-<lab>-sbhost. */
  bridgeNamespace: string;
  /** The bridge's name there, e.g. sb. */
  bridge: string;
  /** The sandbox subnet, e.g. 198.18.2.0/24. */
  subnet: string;
  /** The bridge's own address: the sandboxes' default gateway. */
  gateway: string;
  /** Sandbox namespaces are named <prefix><sandboxID>; the prefix names the instance. */
  netnsPrefix: string;
  /** Addresses of the subnet that are used by something else (never handed out). */
  reserved?: string[];
}

/** The bridge-side veth of a sandbox namespace: a name derived from it that fits the 15-character limit. */
export function bridgePortName(netns: string): string {
  return `v${createHash('sha256').update(netns).digest('hex').slice(0, 12)}`;
}

/**
 * The sandbox's MAC address, derived from its IPv4 address (locally administered 02:53:a:b:c:d). An address that
 * is handed out again comes back with the same MAC, so neighbours' stale ARP entries for it stay right.
 */
export function macFor(address: string): string {
  return ['02', '53', ...address.split('.').map((b) => Number(b).toString(16).padStart(2, '0'))].join(':');
}

export function parseAlias(alias: string | undefined): { netns: string; address: string } | undefined {
  const m = alias ? /^sandbox-kit (\S+) (\d+\.\d+\.\d+\.\d+)$/.exec(alias) : null;
  return m ? { netns: m[1]!, address: m[2]! } : undefined;
}

export class BridgeNetwork implements SandboxNetwork {
  private readonly subnet: Subnet;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly options: BridgeNetworkOptions) {
    this.subnet = parseSubnet(options.subnet);
    if (!/^[A-Za-z0-9_.-]{1,40}$/.test(options.netnsPrefix))
      throw new Error(`invalid netns prefix ${JSON.stringify(options.netnsPrefix)}: 1 to 40 of letters, digits, '_', '.', '-'`);
  }

  netnsName(sandboxID: string): string {
    return `${this.options.netnsPrefix}${checkSandboxID(sandboxID)}`;
  }

  /** Every attachment on the bridge (any instance): namespace -> address. */
  private async ports(): Promise<Map<string, string>> {
    const out = await execOk(['ip', '-n', this.options.bridgeNamespace, '-j', 'link', 'show', 'master', this.options.bridge]);
    const links = JSON.parse(out.trim() || '[]') as Array<{ ifalias?: string }>;
    const result = new Map<string, string>();
    for (const l of links) {
      const a = parseAlias(l.ifalias);
      if (a) result.set(a.netns, a.address);
    }
    return result;
  }

  /** Attaches are serialised within this process, so two creates never pick one address. */
  attach(sandboxID: string): Promise<NetworkAttachment> {
    const next = this.queue.then(() => this.attachNow(sandboxID));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async attachNow(sandboxID: string): Promise<NetworkAttachment> {
    const ns = this.netnsName(sandboxID);
    const o = this.options;
    if (fs.existsSync(`${NETNS_DIR}/${ns}`))
      throw new Error(`network namespace ${ns} already exists (sandbox ${sandboxID} is attached already)`);
    const taken = new Set([o.gateway, ...(o.reserved ?? []), ...(await this.ports()).values()]);
    const address = firstFreeAddress(this.subnet, taken);
    if (!address) throw new Error(`no free address left on ${o.subnet} for sandbox ${sandboxID}`);
    const port = bridgePortName(ns);
    try {
      await execOk(['ip', 'netns', 'add', ns]);
      await execOk(['ip', '-n', o.bridgeNamespace, '-b', '-'], {
        input: [
          `link add ${port} type veth peer name eth0 address ${macFor(address)} netns ${ns}`,
          `link set ${port} alias "${ALIAS_TAG} ${ns} ${address}"`,
          `link set ${port} master ${o.bridge}`,
          `link set ${port} up`,
          '',
        ].join('\n'),
      });
      await execOk(['ip', '-n', ns, '-b', '-'], {
        input: [
          'link set lo up',
          `addr add ${address}/${this.subnet.prefix} dev eth0`,
          'link set eth0 up',
          `route add default via ${o.gateway}`,
          '',
        ].join('\n'),
      });
    } catch (err) {
      await this.detachNs(ns);
      throw new Error(`cannot attach sandbox ${sandboxID} to ${o.bridgeNamespace}/${o.bridge}: ${(err as Error).message}`);
    }
    return { netnsPath: `${NETNS_DIR}/${ns}`, address };
  }

  private async detachNs(ns: string): Promise<void> {
    await exec(['ip', '-force', '-n', this.options.bridgeNamespace, '-b', '-'], { input: `link del ${bridgePortName(ns)}\n` });
    if (fs.existsSync(`${NETNS_DIR}/${ns}`)) await execOk(['ip', 'netns', 'del', ns]);
  }

  async detach(sandboxID: string): Promise<void> {
    await this.detachNs(this.netnsName(sandboxID));
  }

  async list(): Promise<Map<string, NetworkAttachment>> {
    const result = new Map<string, NetworkAttachment>();
    for (const [ns, address] of await this.ports()) {
      if (!ns.startsWith(this.options.netnsPrefix)) continue;
      const id = ns.slice(this.options.netnsPrefix.length);
      if (fs.existsSync(`${NETNS_DIR}/${ns}`)) result.set(id, { netnsPath: `${NETNS_DIR}/${ns}`, address });
    }
    // Namespaces whose bridge port is gone (half-made by a crash) are attachments too, so cleanup finds them.
    for (const name of fs.existsSync(NETNS_DIR) ? fs.readdirSync(NETNS_DIR) : []) {
      if (!name.startsWith(this.options.netnsPrefix)) continue;
      const id = name.slice(this.options.netnsPrefix.length);
      if (!result.has(id) && /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(id))
        result.set(id, { netnsPath: `${NETNS_DIR}/${name}`, address: '' });
    }
    return result;
  }
}
