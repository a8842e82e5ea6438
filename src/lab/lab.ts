/**
 * The lab: the whole egress path on one machine, in network namespaces. `labUp` builds it from the renderers'
 * output and returns a handle; `attachLab` gives the same handle to another process (CLI `lab status/exec/down`).
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPassword, formatIssues, loadStackConfig, type StackConfig } from '../config';
import { proxyHostFiles, renderArtifacts, sysctlSettings } from '../render';
import { ADDRESS_PLAN, checkElasticIp, nextElasticIp } from './address-plan';
import { labScript } from './dist-path';
import { checkEgress, whoamiUrl, type EgressCheck } from './egress-check';
import type { ElasticIpMapping } from './eip-nat';
import { writeLayerFiles } from './etc-layer';
import { DEFAULT_LAB_NAME, checkLabName, labDir, LABS_DIR } from './names';
import { silent, type ProgressFn } from './progress';
import {
  applySysctls,
  defaultRouteDevice,
  hostFilesToLayer,
  readSupervisorStatus,
  startSshd,
  startSupervisor,
  waitListening,
} from './proxy-host';
import { inNamespace, isAlive, run, spawnAttached, spawnDetached, type RunOptions, type RunResult } from './run';
import { sandboxClientFiles, startClient } from './sandbox-client';
import { readState, writeState, type LabMode, type LabState } from './state';
import type { SupervisorStatus } from './supervisor';
import { applyElasticIps, buildTopology, setEdgeAddresses } from './topology';
import { findLeftovers, hasLeftovers, listNamespaces, removeLab, type RemovedLab } from './teardown';

export interface LabOptions {
  /** Short lab name (namespaces are sk-<name>-*); default `lab`. */
  name?: string;
  mode?: LabMode;
  /** How many sandboxes (sb1, sb2, ...); default 1. */
  sandboxes?: number;
  /** One veth from the root namespace into the sandbox host, with a route to the sandbox subnet (for a gateway in the root namespace). */
  hostLink?: boolean;
  /** Stack config; default: the spec's values. */
  config?: StackConfig;
  onProgress?: ProgressFn;
  /** Where lab state lives; default /run/sandbox-kit/labs. */
  stateBase?: string;
}

export interface LabStatus {
  name: string;
  mode: LabMode;
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

/** Tools the lab runs; checked up front so a missing package is one clear message, not a failure halfway. */
const REQUIRED_TOOLS = [
  'ip',
  'iptables',
  'iptables-restore',
  'tc',
  'sysctl',
  'ss',
  'curl',
  'prlimit',
  'ssh-keygen',
  '/usr/sbin/sshd',
  'ss-server',
  'ss-local',
  'ss-redir',
  'mount',
];

async function checkPrerequisites(): Promise<void> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('the lab needs root (it creates network namespaces); run it as root');
  }
  const missing: string[] = [];
  for (const tool of REQUIRED_TOOLS) {
    if ((await run(['sh', '-c', 'command -v "$1" >/dev/null', 'sh', tool])).code !== 0) missing.push(tool);
  }
  if (missing.length > 0) {
    throw new Error(`missing tools: ${missing.join(', ')}; install the Debian packages with scripts/setup-host.sh`);
  }
}

export class Lab {
  constructor(private state: LabState) {}

  get name(): string {
    return this.state.name;
  }
  get mode(): LabMode {
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
    const base = this.plan.sandboxSubnet.split('/')[0]!.split('.').slice(0, 3).join('.');
    return `${base}.${11 + i}`;
  }

  egressCheck(sandbox = this.state.sandboxes[0]!): Promise<EgressCheck> {
    return checkEgress({
      exec: (node, argv) => this.exec(node, argv),
      mode: this.mode,
      sandbox,
      url: whoamiUrl(this.plan.web, this.plan.webHttpPort),
      socksPort: 1080,
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
    const target = checkElasticIp(to ?? nextElasticIp(from, this.plan), this.plan);
    if (target === from) throw new Error(`the egress Elastic IP is already ${from}`);
    const edge = this.namespace('inet');
    const next: ElasticIpMapping = { publicAddress: target, privateAddress: egress.privateAddress };
    await applyElasticIps(edge, [ingress, next]);
    await setEdgeAddresses(edge, [target], [from]);
    this.state.eips.egress = next;
    writeState(this.state);
    return { from, to: target };
  }

  async status(): Promise<LabStatus> {
    const present = await listNamespaces();
    const namespaces = Object.entries(this.state.namespaces).map(([node, name]) => ({ node, name, present: present.includes(name) }));
    const processes = this.state.processes.map((p) => ({ role: p.role, node: p.node, pid: p.pid, alive: isAlive(p.pid) }));
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

export async function labUp(options: LabOptions = {}): Promise<Lab> {
  const name = checkLabName(options.name ?? DEFAULT_LAB_NAME);
  const mode: LabMode = options.mode ?? 'local';
  if (mode !== 'local' && mode !== 'transparent')
    throw new Error(`invalid lab mode ${JSON.stringify(mode)}: expected local or transparent`);
  const sandboxCount = options.sandboxes ?? 1;
  if (!Number.isInteger(sandboxCount) || sandboxCount < 1 || sandboxCount > 200) {
    throw new Error(`invalid sandbox count ${sandboxCount}: expected an integer from 1 to 200`);
  }
  const progress = options.onProgress ?? silent;
  const config = options.config ?? loadStackConfig({});
  const stateBase = options.stateBase ?? LABS_DIR;
  await checkPrerequisites();
  // Fail before building anything when the project is not built.
  labScript('supervisor');
  const whoamiScript = labScript('whoami');

  const leftovers = await findLeftovers(name, stateBase);
  if (hasLeftovers(leftovers)) {
    progress({
      step: 'cleanup',
      message: `leftovers of an earlier lab ${name}: ${leftovers.namespaces.length} namespaces${leftovers.hostLink ? ', host link' : ''}${leftovers.stateDir ? ', state directory' : ''}; removing`,
    });
    await removeLab(name, stateBase);
  }

  const dir = labDir(name, stateBase);
  mkdirSync(join(dir, 'logs'), { recursive: true, mode: 0o700 });
  const plan = ADDRESS_PLAN;
  const dedicated = config.egress.mode === 'dedicated';
  const eips = {
    ingress: { publicAddress: plan.ingressEip, privateAddress: plan.proxyPrimary },
    egress: dedicated
      ? { publicAddress: plan.egressEip, privateAddress: plan.proxyEgress }
      : { publicAddress: plan.ingressEip, privateAddress: plan.proxyPrimary },
  };

  // A fresh random password per lab, kept only in a root-only file and in the 0600 rendered configs.
  const password = randomBytes(24).toString('base64url');
  const passwordIssues = checkPassword(password, 'lab password');
  if (passwordIssues.length > 0) throw new Error(formatIssues(passwordIssues));
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });

  const inputs = {
    serverIp: eips.ingress.publicAddress,
    password,
    ...(dedicated ? { egressBindAddress: plan.proxyEgress } : {}),
    hostNetworks: [plan.proxySubnet],
  };
  const artifacts = renderArtifacts(config, inputs);
  const hostFiles = proxyHostFiles(config, inputs);

  const state: LabState = {
    version: 1,
    name,
    mode,
    createdAt: new Date().toISOString(),
    dir,
    namespaces: {},
    sandboxes: [],
    plan,
    eips,
    processes: [],
    passwordFile,
    ssh: { clientKey: '', user: 'root', port: 22 },
    etcLayers: {},
    runDirs: {},
    supervisorStatusFile: join(dir, 'supervisor.json'),
    sysctls: { applied: {}, notApplied: {} },
  };

  try {
    const topology = await buildTopology({
      lab: name,
      sandboxes: sandboxCount,
      hostLink: options.hostLink ?? false,
      plan,
      eips: dedicated ? [eips.ingress, eips.egress] : [eips.ingress],
      progress,
    });
    state.namespaces = topology.namespaces;
    state.sandboxes = topology.sandboxes;
    if (topology.hostLink) state.hostLink = topology.hostLink;
    writeState(state);
    const ns = (node: string): string => topology.namespaces[node]!;

    // The internet's services: what-is-my-IP (HTTP + UDP echo) on the web host; on the edge, a service inside the
    // proxy's private network and a metadata stand-in, both of which the proxy must refuse to reach.
    const startService = async (role: string, node: string, argv: string[], port: number): Promise<void> => {
      const log = join(dir, 'logs', `${role}.log`);
      const pid = spawnDetached(inNamespace(ns(node), argv), log);
      state.processes.push({ role, node, pid, log });
      writeState(state);
      await waitListening(ns(node), 'tcp', port, role);
    };
    await startService(
      'whoami',
      'web',
      [
        process.execPath,
        whoamiScript,
        '--http',
        `${plan.web}:${plan.webHttpPort}`,
        '--udp',
        `${plan.web}:${plan.webUdpPort}`,
        '--name',
        'internet',
      ],
      plan.webHttpPort,
    );
    progress({ step: 'services', message: `what-is-my-IP on ${plan.web}: HTTP ${plan.webHttpPort}/tcp, UDP echo ${plan.webUdpPort}/udp` });
    await startService(
      'private-service',
      'inet',
      [process.execPath, whoamiScript, '--http', `0.0.0.0:${plan.webHttpPort}`, '--name', 'private'],
      plan.webHttpPort,
    );
    progress({
      step: 'services',
      message: `private service on ${plan.edgePrivate}:${plan.webHttpPort} and metadata stand-in on ${plan.metadata}:${plan.webHttpPort}`,
    });

    // The proxy host.
    const proxyLayer = join(dir, 'etc', 'proxy');
    state.etcLayers.proxy = proxyLayer;
    writeLayerFiles(proxyLayer, hostFilesToLayer(hostFiles));
    writeState(state);
    for (const f of hostFiles) progress({ step: 'proxy', message: `host file ${f.path} (${f.permissions})` });
    const device = await defaultRouteDevice(ns('proxy'));
    state.sysctls = await applySysctls(ns('proxy'), sysctlSettings(config.proxy), device);
    for (const [k, v] of Object.entries(state.sysctls.applied)) progress({ step: 'proxy', message: `sysctl ${k}=${v}` });
    for (const [k, why] of Object.entries(state.sysctls.notApplied))
      progress({ step: 'proxy', message: `sysctl ${k} not applied: ${why}` });

    const supervisor = await startSupervisor(ns('proxy'), proxyLayer, dir, config.proxy.port);
    state.processes.push({ role: 'supervisor', node: 'proxy', pid: supervisor.pid, log: supervisor.log });
    writeState(state);
    if (config.proxy.mode !== 'tcp_only') await waitListening(ns('proxy'), 'udp', config.proxy.port, 'ss-server');
    progress({
      step: 'proxy',
      message: `ss-server running under the supervisor (unit ${hostFiles.find((f) => f.path.endsWith('.service'))!.path}), pid ${readSupervisorStatus(supervisor.statusFile)?.pid}`,
    });

    const ssh = await startSshd(ns('proxy'), proxyLayer, dir);
    state.processes.push({ role: 'sshd', node: 'proxy', pid: ssh.pid, log: ssh.log });
    state.ssh = { clientKey: ssh.clientKey, user: 'root', port: ssh.port };
    writeState(state);
    progress({ step: 'proxy', message: `sshd on ${plan.proxyPrimary}:${ssh.port} (root, key ${ssh.clientKey})` });

    // The sandboxes.
    for (const node of topology.sandboxes) {
      const layer = join(dir, 'etc', node);
      const runDir = join(dir, 'run', node);
      state.etcLayers[node] = layer;
      state.runDirs[node] = runDir;
      writeLayerFiles(layer, sandboxClientFiles(artifacts));
      writeState(state);
      await startClient(ns(node), layer, runDir, mode, join(dir, 'logs', `client-${node}.log`));
      progress({
        step: 'sandbox',
        message:
          mode === 'local'
            ? `${node}: ss-local on 1080 (SOCKS5) -> ${eips.ingress.publicAddress}:${config.proxy.port}`
            : `${node}: ss-redir on ${config.client.redirectPort}, ss-local on ${config.client.localPort}, NAT chain up -> ${eips.ingress.publicAddress}:${config.proxy.port}`,
      });
    }

    const lab = new Lab(state);
    const check = await lab.egressCheck();
    progress({ step: 'check', message: `direct from ${check.directFrom}: ${check.direct}` });
    progress({
      step: 'check',
      message: `through the proxy from ${topology.sandboxes[0]}: ${check.proxied} (egress Elastic IP ${check.expectedEgress})`,
    });
    if (!check.ok)
      throw new Error(
        `egress check failed: through the proxy ${check.proxied}, directly ${check.direct}, expected the proxied address to be ${check.expectedEgress}`,
      );
    return lab;
  } catch (err) {
    progress({ step: 'cleanup', message: `lab up failed; removing what was built` });
    await removeLab(name, stateBase).catch(() => undefined);
    throw err;
  }
}

/** Whether any of this lab's namespaces exist (for callers that want to know without a state file). */
export async function labExists(name: string, stateBase?: string): Promise<boolean> {
  return hasLeftovers(await findLeftovers(checkLabName(name), stateBase)) || existsSync(labDir(name, stateBase));
}
