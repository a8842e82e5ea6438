/**
 * The lab: the whole egress path on one machine, in network namespaces. `labUp` builds it from the renderers'
 * output and returns a handle; `attachLab` gives the same handle to another process (CLI `lab status/exec/down`).
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type ClientMode, loadStackConfig, type StackConfig } from '../config';
import { checkElasticIp, nextElasticIp, sandboxAddress } from './address-plan';
import { checkEgress, type EgressCheck, whoamiUrl } from './egress-check';
import type { ElasticIpMapping } from './eip-nat';
import { checkLabName, DEFAULT_LAB_NAME, LABS_DIR, labDir } from './names';
import { type ProgressFn, silent } from './progress';
import { readSupervisorStatus } from './proxy-host';
import { inNamespace, isAlive, type RunOptions, type RunResult, run, spawnAttached } from './run';
import { type LabState, readState, writeState } from './state';
import { recreateProxyHost } from './recreate-proxy';
import { LAB_STEPS, prepare, recordStep } from './steps';
import type { SupervisorStatus } from './supervisor';
import { findLeftovers, hasLeftovers, listNamespaces, type RemovedLab, removeLab } from './teardown';
import { applyElasticIps, setEdgeAddresses } from './topology';
import { isSameProcess } from '../util/process-start';

export interface LabOptions {
  /** Short lab name (namespaces are sk-<name>-*); default `lab`. */
  name?: string;
  mode?: ClientMode;
  /** How many sandboxes (sb1, sb2, ...); default 1. */
  sandboxes?: number;
  /** One veth from the root namespace into the sandbox host, with a route to the sandbox subnet (for a gateway in the root namespace). */
  hostLink?: boolean;
  /** Stack config; default: the schema's defaults. */
  config?: StackConfig;
  onProgress?: ProgressFn;
  /** Where lab state lives; default /run/sandbox-kit/labs. */
  stateBase?: string;
}

export interface LabStatus {
  name: string;
  mode: ClientMode;
  createdAt: string;
  namespaces: { node: string; name: string; present: boolean }[];
  processes: { role: string; node: string; pid: number; alive: boolean }[];
  server?: SupervisorStatus;
  ingressEip: string;
  egressEip: string;
  proxyAddress: string;
  sandboxes: { node: string; address: string }[];
  sysctls: LabState['sysctls'];
  hostLink?: LabState['hostLink'];
  healthy: boolean;
}

export class Lab {
  constructor(private state: LabState) {}

  get name(): string {
    return this.state.name;
  }
  get mode(): ClientMode {
    return this.state.mode;
  }
  get plan(): LabState['plan'] {
    return this.state.plan;
  }
  get sandboxes(): string[] {
    return [...this.state.sandboxes];
  }
  get ingressEip(): string {
    return this.state.eips.ingress.publicAddress;
  }
  get egressEip(): string {
    return this.state.eips.egress.publicAddress;
  }
  /** Private key that logs in as root on the lab's proxy host (sshd in the proxy namespace). */
  get sshClientKey(): string {
    return this.state.ssh.clientKey;
  }
  /** The stack config the lab was started with. */
  get config(): StackConfig {
    return structuredClone(this.state.config);
  }
  /** The SOCKS5 port of the proxy client in every sandbox (`client.localPort`). */
  get socksPort(): number {
    return this.state.config.client.localPort;
  }
  get hostLink(): LabState['hostLink'] {
    return this.state.hostLink;
  }
  get snapshot(): LabState {
    return structuredClone(this.state);
  }

  /** The namespace of a node: `proxy`, `inet`, `web`, `sbhost`, `sb1`, ... (a full namespace name is accepted too). */
  namespace(node: string): string {
    const direct = this.state.namespaces[node];
    if (direct) return direct;
    if (Object.values(this.state.namespaces).includes(node)) return node;
    throw new Error(`lab ${this.name} has no node ${JSON.stringify(node)}; nodes: ${Object.keys(this.state.namespaces).join(', ')}`);
  }

  private nodeOf(nodeOrNs: string): string {
    const ns = this.namespace(nodeOrNs);
    return Object.entries(this.state.namespaces).find(([, n]) => n === ns)![0];
  }

  /** argv that runs `argv` in the node, with the node's /etc view (proxy host and sandbox files) where it has one. */
  argvIn(node: string, argv: readonly string[]): string[] {
    return inNamespace(this.namespace(node), argv, this.state.etcLayers[this.nodeOf(node)]);
  }

  /** Runs a command in a node (a sandbox or any other node) and collects its output. */
  exec(node: string, argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    if (argv.length === 0) throw new Error('lab exec: no command given');
    return run(this.argvIn(node, argv), options);
  }

  /** Starts a process in a node and hands it back (the caller owns it; namespaces are removed by down()). */
  spawnIn(node: string, argv: readonly string[], options: SpawnOptions = {}): ChildProcess {
    if (argv.length === 0) throw new Error('lab spawnIn: no command given');
    return spawnAttached(this.argvIn(node, argv), options);
  }

  /** The supervisor's view of ss-server (its pid, how many times it started). */
  serverStatus(): SupervisorStatus | undefined {
    return readSupervisorStatus(this.state.supervisorStatusFile);
  }

  sandboxAddress(node: string): string {
    const i = this.state.sandboxes.indexOf(node);
    if (i < 0) throw new Error(`lab ${this.name} has no sandbox ${JSON.stringify(node)}; sandboxes: ${this.state.sandboxes.join(', ')}`);
    return sandboxAddress(i + 1, this.plan);
  }

  egressCheck(sandbox = this.state.sandboxes[0]!): Promise<EgressCheck> {
    return checkEgress({
      exec: (node, argv) => this.exec(node, argv),
      mode: this.mode,
      sandbox,
      url: whoamiUrl(this.plan.web, this.plan.webHttpPort),
      socksPort: this.socksPort,
      expectedEgress: this.egressEip,
    });
  }

  /**
   * Moves the egress Elastic IP to another public address (default: the next free one), as re-associating an EIP
   * does on AWS: only the edge's 1:1 NAT changes; the proxy host and the sandboxes are untouched.
   */
  async repointEgress(to?: string): Promise<{ from: string; to: string }> {
    const from = this.egressEip;
    const { ingress, egress } = this.state.eips;
    if (egress.privateAddress === ingress.privateAddress) {
      throw new Error(
        'this lab runs with egress.mode=shared: the egress address is the ingress address, so re-pointing it would change what clients dial',
      );
    }
    let candidate = to ?? nextElasticIp(from, this.plan);
    // After a recreate the ingress address is no longer the plan's: never hand it out as the egress address.
    while (to === undefined && candidate === ingress.publicAddress) candidate = nextElasticIp(candidate, this.plan);
    const target = checkElasticIp(candidate, this.plan);
    if (target === ingress.publicAddress) throw new Error(`${target} is the ingress Elastic IP; pick another address`);
    if (target === from) throw new Error(`the egress Elastic IP is already ${from}`);
    const edge = this.namespace('inet');
    const next: ElasticIpMapping = { publicAddress: target, privateAddress: egress.privateAddress };
    await applyElasticIps(edge, [ingress, next]);
    await setEdgeAddresses(edge, [target], [from]);
    this.state.eips.egress = next;
    writeState(this.state);
    return { from, to: target };
  }

  /** A new proxy host: new ingress address and password, ss-server restarted, the lab's sandbox nodes reconfigured. */
  recreateProxyHost(): Promise<{ oldIngress: string; newIngress: string }> {
    return recreateProxyHost(this.state);
  }

  async status(): Promise<LabStatus> {
    const present = await listNamespaces();
    const namespaces = Object.entries(this.state.namespaces).map(([node, name]) => ({ node, name, present: present.includes(name) }));
    const processes = this.state.processes.map((p) => ({
      role: p.role,
      node: p.node,
      pid: p.pid,
      alive: isSameProcess(p.pid, p.startTime),
    }));
    const server = this.serverStatus();
    const serverRunning = server?.state === 'running' && server.pid !== undefined && isAlive(server.pid);
    return {
      name: this.name,
      mode: this.mode,
      createdAt: this.state.createdAt,
      namespaces,
      processes,
      ...(server ? { server } : {}),
      ingressEip: this.ingressEip,
      egressEip: this.egressEip,
      proxyAddress: this.plan.proxyPrimary,
      sandboxes: this.state.sandboxes.map((node) => ({ node, address: this.sandboxAddress(node) })),
      sysctls: this.state.sysctls,
      ...(this.state.hostLink ? { hostLink: this.state.hostLink } : {}),
      healthy: namespaces.every((n) => n.present) && processes.every((p) => p.alive) && serverRunning,
    };
  }

  /** Stops every process and removes every namespace, link and file of this lab. */
  down(onProgress: ProgressFn = silent): Promise<RemovedLab> {
    return downLab(this.name, onProgress, this.state.dir.slice(0, this.state.dir.lastIndexOf('/')));
  }
}

export async function downLab(name: string, onProgress: ProgressFn = silent, stateBase?: string): Promise<RemovedLab> {
  checkLabName(name);
  const removed = await removeLab(name, stateBase);
  onProgress({
    step: 'teardown',
    message: `lab ${name}: stopped ${removed.processes} processes, removed ${removed.namespaces.length} namespaces${removed.hostLink ? ', the host link' : ''}${removed.stateDir ? ' and the state directory' : ''}`,
  });
  return removed;
}

/** The handle of a lab that is up (possibly started by another process). */
export function attachLab(name = DEFAULT_LAB_NAME, stateBase?: string): Lab {
  checkLabName(name);
  const state = readState(name, stateBase);
  if (!state) throw new Error(`no lab named ${name} is up (no state in ${labDir(name, stateBase)}); start one with 'sandbox-kit lab up'`);
  return new Lab(state);
}

/** Builds a lab step by step (prepare, then LAB_STEPS), each step timed; on failure removes what was built. */
export async function labUp(options: LabOptions = {}): Promise<Lab> {
  const progress = options.onProgress ?? silent;
  const stateBase = options.stateBase ?? LABS_DIR;
  const { ctx, state } = await prepare({
    name: options.name ?? DEFAULT_LAB_NAME,
    mode: options.mode ?? 'local',
    sandboxCount: options.sandboxes ?? 1,
    hostLink: options.hostLink ?? false,
    config: options.config ?? loadStackConfig({}),
    stateBase,
    progress,
  });
  recordStep(state, {});
  try {
    for (const step of LAB_STEPS) {
      const started = Date.now();
      recordStep(state, await step.run(ctx, state));
      progress({ step: step.name, message: `done in ${((Date.now() - started) / 1000).toFixed(1)} s` });
    }
    return new Lab(state);
  } catch (err) {
    progress({ step: 'cleanup', message: 'lab up failed; removing what was built' });
    await removeLab(state.name, stateBase).catch(() => undefined);
    throw err;
  }
}

/** Whether any of this lab's namespaces exist (for callers that want to know without a state file). */
export async function labExists(name: string, stateBase?: string): Promise<boolean> {
  return hasLeftovers(await findLeftovers(checkLabName(name), stateBase)) || existsSync(labDir(name, stateBase));
}
