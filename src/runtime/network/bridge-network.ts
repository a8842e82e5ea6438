/**
 * SandboxNetwork on a Linux bridge that lives in a given network namespace (the lab's sandbox host, or the
 * standalone one of host-network.ts). Each sandbox gets its own namespace `<prefix><sandboxID>` with `eth0`, one
 * end of a veth pair whose other end is a port of the bridge, lo up and a default route via the bridge's address.
 * `attach` makes the pair and the port's rules; the namespace itself is made by the sandbox's container, owned by
 * its user namespace, and the link moved in by pid once it exists (join-link.ts; NetworkAttachment.pending).
 *
 * The bridge-side end carries the facts as its link alias (`sandbox-kit <namespace> <address>`), so attachments
 * and used addresses are read back from the system: they survive a platform restart, and two instances on one
 * bridge see each other's addresses.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { exec, execOk } from '../../util/exec';
import { DEFAULT_ID_MAPPING, type IdMapping } from '../id-shift';
import { checkSandboxID } from '../instance';
import { nameserversOf } from '../sandbox-etc';
import { existingUsernsPath, removeUserNamespace, withNewNamespaces } from '../userns';
import { joinNetwork, parkedPeerName, type JoinFacts } from './join-link';
import type { NetworkAttachment, SandboxNetwork } from '../types';
import { attachPolicyScript, needsRelay, policyScript, type EgressPolicy } from './egress-policy';
import { removeRelayPolicy, writeRelayPolicy } from './egress-relay/relay-policy';
import { ensureRelay, relayDir } from './relay-process';
import { attachPortCommands, boundOf, detachPortScript, guardScript, L2_GUARD, portPlugArgv } from './guard-rules';
import { bundledProgram } from '../bundled-program';
import { hostSandboxResolvConf } from './host-resolvers';
import { firstFreeAddress, parseSubnet, type Subnet } from './ipv4';
import { sandboxBlockedDestinations } from './private-ranges';
import { timed, type StepTimes } from '../../util/step-times';
import { inNetns, NETNS_DIR } from './in-netns';

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
  /** The link from the root side, the one way new connections reach sandboxes (guard-rules.ts); default host0. */
  rootLink?: string;
  /** Resolvers sandboxes may reach on port 53; default the nameservers of the host's resolv.conf. */
  dnsResolvers?: string[];
  /** Networks of the host (a VPC) sandboxes may not reach, on top of private and link-local space. */
  hostNetworks?: string[];
  /**
   * The ids of the user namespace that owns each sandbox's network namespace (userns.ts); default the kit's. null: a
   * plain network namespace, only for the benchmark that measures what the hardening costs.
   */
  idMapping?: IdMapping | null;
  /** The egress relay's program (relay-process.ts); default the kit's bundle. */
  relayProgram?: string;
  /**
   * The port-plug program (port-plug.c) that plugs a port in with netlink alone; default the build's. null: without
   * it, `ip -b` and `bridge -b` batches (attachPortCommands), each of which reads every link of the namespace.
   */
  portPlug?: string | null;
  /**
   * The netns-join program (netns-join.c) that joins a sandbox's link to its namespace in one process; default the
   * build's. null: without it, `ip` commands (join-link.ts, joinLink), four processes.
   */
  netnsJoin?: string | null;
  /** Hears how long each step of an attach takes (the hardening benchmark's breakdown). */
  times?: StepTimes;
}

/** The root side's link into a sandbox-host namespace (the lab's and the standalone one both name it so). */
export const ROOT_LINK = 'host0';

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

/**
 * The addresses taken on each bridge, shared by every BridgeNetwork of this process: read from the bridge's ports
 * (their aliases) on the first attach, then kept by this process's attaches and detaches, so an attach does not read
 * every link of the bridge's namespace again (that read takes 10-20 ms with 200 sandboxes). A bridge is known by its
 * namespace's name and inode, so one made again under the same name is read again. The process that runs a sandbox
 * host's bridge (the platform, the local system's service) is the one that attaches sandboxes to it.
 */
const takenOnBridge = new Map<string, Promise<Set<string>>>();

export class BridgeNetwork implements SandboxNetwork {
  private readonly subnet: Subnet;
  private queue: Promise<unknown> = Promise.resolve();
  private guarded = false;
  /** Ports being made, by namespace: a detach or a policy change waits for its port first. */
  private readonly making = new Map<string, Promise<void>>();

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
    const out = await execOk(inNetns(this.options.bridgeNamespace, ['ip', '-j', 'link', 'show', 'master', this.options.bridge]));
    const links = JSON.parse(out.trim() || '[]') as Array<{ ifalias?: string }>;
    const result = new Map<string, string>();
    for (const l of links) {
      const a = parseAlias(l.ifalias);
      if (a) result.set(a.netns, a.address);
    }
    return result;
  }

  /**
   * Attaches are serialised within this process, so two creates never pick one address and two ports are never made
   * at once: the next attach starts when this one's port is made. The attachment is returned as soon as its address
   * is taken; its port is made meanwhile (NetworkAttachment.pending.made), while the caller makes the sandbox's disk,
   * files and container. A policy given here is in place before the port comes up, loaded with the port's own rules
   * (no second pass).
   */
  attach(sandboxID: string, policy?: EgressPolicy): Promise<NetworkAttachment> {
    const next = this.queue.then(() => this.attachNow(sandboxID, policy));
    this.queue = next.then((a) => a.pending?.made).catch(() => undefined);
    return next;
  }

  private resolvers(): string[] {
    return this.options.dnsResolvers ?? nameserversOf(hostSandboxResolvConf());
  }

  private blocked(): string[] {
    return sandboxBlockedDestinations(this.options.hostNetworks ?? []);
  }

  /** Loads the bridge-wide rules once per process (idempotent: a restart loads the same rules again). */
  private async guard(): Promise<void> {
    if (this.guarded) return;
    const o = this.options;
    await execOk(inNetns(o.bridgeNamespace, ['sh', '-s']), {
      input: guardScript({ bridge: o.bridge, rootLink: o.rootLink ?? ROOT_LINK, dnsResolvers: this.resolvers(), blocked: this.blocked() }),
    });
    this.guarded = true;
  }

  /** The relay's side of a policy: its file written (or removed) and the relay running when the policy needs it. */
  private async prepareRelay(address: string, policy: EgressPolicy | undefined): Promise<void> {
    const dir = relayDir(this.options.bridgeNamespace);
    if (!needsRelay(policy)) {
      removeRelayPolicy(dir, address);
      return;
    }
    const p = policy as EgressPolicy;
    writeRelayPolicy(dir, address, {
      allowOut: p.allowOut,
      denyOut: p.denyOut,
      allowDomains: p.allowDomains ?? [],
      ...(p.proxy ? { proxy: p.proxy } : {}),
      ...(p.transforms ? { transforms: p.transforms } : {}),
      resolvers: this.resolvers(),
      blocked: this.blocked(),
    });
    await ensureRelay(this.options.bridgeNamespace, this.options.relayProgram);
  }

  private async attachNow(sandboxID: string, policy: EgressPolicy | undefined): Promise<NetworkAttachment> {
    const ns = this.netnsName(sandboxID);
    const o = this.options;
    if (fs.existsSync(`${NETNS_DIR}/${ns}`) || this.making.has(ns))
      throw new Error(`network namespace ${ns} already exists (sandbox ${sandboxID} is attached already)`);
    await this.guard();
    const onBridge = await this.taken();
    const address = firstFreeAddress(this.subnet, new Set([o.gateway, ...(o.reserved ?? []), ...onBridge]));
    if (!address) throw new Error(`no free address left on ${o.subnet} for sandbox ${sandboxID}`);
    // Taken before anything awaits: another BridgeNetwork of this process on the same bridge picks another.
    onBridge.add(address);
    const made = this.makePort(sandboxID, ns, address, policy);
    this.making.set(ns, made);
    // Settled either way for detach; a failure reaches the caller through join or prepare.
    void made.then(
      () => this.making.delete(ns),
      () => this.making.delete(ns),
    );
    const facts: JoinFacts = {
      bridgeNamespace: o.bridgeNamespace,
      peer: parkedPeerName(ns),
      port: bridgePortName(ns),
      netns: ns,
      addressWithPrefix: `${address}/${this.subnet.prefix}`,
      gateway: o.gateway,
    };
    const program = o.netnsJoin === undefined ? bundledProgram('netns-join') : (o.netnsJoin ?? undefined);
    return {
      netnsPath: `${NETNS_DIR}/${ns}`,
      address,
      pending: {
        made,
        join: async (pid, alongside) => {
          await made;
          await joinNetwork(facts, pid, alongside, program);
        },
        // Made ahead, as a runtime would: a new user namespace (the kit's mapping) owning a new network namespace.
        prepare: async () => {
          await made;
          await timed(o.times, 'attach: namespaces', async () => {
            const mapping = o.idMapping === null ? null : (o.idMapping ?? DEFAULT_ID_MAPPING);
            try {
              await withNewNamespaces(mapping, (pid) => joinNetwork(facts, pid, undefined, program));
            } catch (err) {
              throw new Error(`cannot make the network namespace of sandbox ${sandboxID}: ${(err as Error).message}`);
            }
          });
        },
      },
    };
  }

  /**
   * The port of `ns` on the bridge: its egress policy and its L2 guard first, by its name, then the veth pair with the
   * sandbox's end parked, then the FDB entry (guard-rules.ts); by the build's port-plug program (one process, netlink
   * alone), or without it by `nft`, `ip` and `bridge`. On failure what was made is removed.
   */
  private async makePort(sandboxID: string, ns: string, address: string, policy: EgressPolicy | undefined): Promise<void> {
    const o = this.options;
    try {
      const t0 = performance.now();
      const facts = {
        port: bridgePortName(ns),
        peer: parkedPeerName(ns),
        mac: macFor(address),
        address,
        alias: `${ALIAS_TAG} ${ns} ${address}`,
      };
      await this.prepareRelay(address, policy);
      const policyRules = attachPolicyScript(bridgePortName(ns), address, policy);
      const plug = o.portPlug === undefined ? bundledProgram('port-plug') : (o.portPlug ?? undefined);
      if (plug !== undefined) {
        // The program does the L2 guard's elements, the links and the FDB entry, in that order.
        if (policyRules !== '') await execOk(inNetns(o.bridgeNamespace, ['sh', '-s']), { input: `set -e\n${policyRules}` });
        await execOk(portPlugArgv(plug, `${NETNS_DIR}/${o.bridgeNamespace}`, facts, o.bridge));
      } else {
        const commands = attachPortCommands(facts, o.bridge);
        if (policyRules === '') await execOk(inNetns(o.bridgeNamespace, ['nft', '-f', '-']), { input: commands.rules });
        else
          await execOk(inNetns(o.bridgeNamespace, ['sh', '-s']), {
            input: `set -e\n${policyRules}nft -f - <<'RULES'\n${commands.rules}RULES\n`,
          });
        await execOk(inNetns(o.bridgeNamespace, ['ip', '-b', '-']), { input: commands.links });
        await execOk(inNetns(o.bridgeNamespace, ['bridge', '-b', '-']), { input: commands.fdb });
      }
      o.times?.('attach: port and rules', performance.now() - t0);
    } catch (err) {
      await this.detachNs(ns, address);
      throw new Error(`cannot attach sandbox ${sandboxID} to ${o.bridgeNamespace}/${o.bridge}: ${(err as Error).message}`);
    }
  }

  async setEgressPolicy(sandboxID: string, policy: EgressPolicy | undefined): Promise<void> {
    const ns = this.netnsName(sandboxID);
    await this.making.get(ns)?.catch(() => undefined);
    const address = (await this.ports()).get(ns);
    if (address === undefined)
      throw new Error(`sandbox ${sandboxID} is not attached to ${this.options.bridgeNamespace}/${this.options.bridge}`);
    await this.guard();
    await this.prepareRelay(address, policy);
    await execOk(inNetns(this.options.bridgeNamespace, ['sh', '-s']), {
      input: policyScript(bridgePortName(ns), address, policy),
    });
  }

  /** The addresses taken on this bridge (takenOnBridge). */
  private taken(): Promise<Set<string>> {
    const key = this.bridgeKey();
    let taken = takenOnBridge.get(key);
    if (taken === undefined) {
      taken = this.ports().then((ports) => new Set(ports.values()));
      takenOnBridge.set(key, taken);
      taken.catch(() => takenOnBridge.delete(key));
    }
    return taken;
  }

  private bridgeKey(): string {
    const ns = this.options.bridgeNamespace;
    return `${ns}:${fs.statSync(`${NETNS_DIR}/${ns}`, { throwIfNoEntry: false })?.ino ?? 'gone'}`;
  }

  private async detachNs(ns: string, address?: string): Promise<void> {
    const o = this.options;
    const port = bridgePortName(ns);
    let known = address;
    if (known === undefined) {
      const shown = await exec(inNetns(o.bridgeNamespace, ['ip', '-j', 'link', 'show', 'dev', port]));
      if (shown.code === 0)
        known = parseAlias((JSON.parse(shown.stdout.trim() || '[]') as Array<{ ifalias?: string }>)[0]?.ifalias)?.address;
    }
    if (known !== undefined) removeRelayPolicy(relayDir(o.bridgeNamespace), known);
    if (fs.existsSync(`${NETNS_DIR}/${o.bridgeNamespace}`)) {
      const policy = known === undefined ? '' : policyScript(port, known, undefined).replace(/exit 0\n$/, '');
      // With the port's alias gone (a half-made or half-removed port), its L2 elements are read from the guard's set.
      const bound =
        known !== undefined
          ? [{ mac: macFor(known), address: known }]
          : boundOf(
              (await exec(inNetns(o.bridgeNamespace, ['nft', '-j', 'list', 'set', 'bridge', L2_GUARD.table, L2_GUARD.bound]))).stdout ||
                '{}',
              port,
            );
      await exec(inNetns(o.bridgeNamespace, ['sh', '-s']), { input: policy + detachPortScript(port, bound, o.bridge) });
    }
    if (fs.existsSync(`${NETNS_DIR}/${ns}`)) await execOk(['ip', 'netns', 'del', ns]);
    await removeUserNamespace(ns);
    // Free again once its port is gone; otherwise (or when the address is not known here) the next attach reads the
    // bridge's ports again.
    const key = this.bridgeKey();
    const portGone = (await exec(inNetns(o.bridgeNamespace, ['ip', 'link', 'show', 'dev', port]))).code !== 0;
    if (known === undefined || !portGone) takenOnBridge.delete(key);
    else (await takenOnBridge.get(key))?.delete(known);
  }

  async detach(sandboxID: string): Promise<void> {
    const ns = this.netnsName(sandboxID);
    await this.making.get(ns)?.catch(() => undefined);
    await this.detachNs(ns);
  }

  async list(): Promise<Map<string, NetworkAttachment>> {
    const result = new Map<string, NetworkAttachment>();
    for (const [ns, address] of await this.ports()) {
      if (!ns.startsWith(this.options.netnsPrefix)) continue;
      const id = ns.slice(this.options.netnsPrefix.length);
      const usernsPath = existingUsernsPath(ns);
      // A port whose namespace was never made (a crash before its container) is an attachment too, so cleanup finds it.
      result.set(id, { netnsPath: `${NETNS_DIR}/${ns}`, address, ...(usernsPath ? { usernsPath } : {}) });
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
