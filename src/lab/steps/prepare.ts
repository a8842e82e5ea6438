/**
 * The first step of `labUp`: checks what the lab needs before anything changes (root, tools, a built project),
 * removes leftovers of an earlier run of the same lab, and renders everything for this lab. Its result is the
 * lab's initial state, which keeps the stack config the lab was started with.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPassword, type ClientMode, formatIssues, type StackConfig } from '../../config';
import { proxyHostFiles, renderArtifacts } from '../../render';
import { ADDRESS_PLAN, MAX_SANDBOXES } from '../address-plan';
import { labScript } from '../dist-path';
import { checkLabName, labDir } from '../names';
import type { ProgressFn } from '../progress';
import { run } from '../run';
import { type LabState, STATE_VERSION } from '../state';
import { findLeftovers, hasLeftovers, removeLab } from '../teardown';
import type { LabStepContext } from './context';

/** Tools the lab runs; checked up front so a missing package is one clear message, not a failure halfway. */
export const REQUIRED_TOOLS = [
  'ip',
  'iptables',
  'iptables-restore',
  'nft',
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

/** Every reason the lab cannot be built on this machine, all at once (empty when it can). */
export async function labPrerequisites(): Promise<string[]> {
  const problems: string[] = [];
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    problems.push('the lab needs root (it creates network namespaces); run it as root');
  }
  const missing: string[] = [];
  for (const tool of REQUIRED_TOOLS) {
    if ((await run(['sh', '-c', 'command -v "$1" >/dev/null', 'sh', tool])).code !== 0) missing.push(tool);
  }
  if (missing.length > 0) problems.push(`missing tools: ${missing.join(', ')}; install the Debian packages with scripts/setup-host.sh`);
  try {
    labScript('supervisor');
    labScript('whoami');
  } catch (err) {
    problems.push((err as Error).message);
  }
  return problems;
}

export interface LabRequest {
  name: string;
  mode: ClientMode;
  sandboxCount: number;
  hostLink: boolean;
  config: StackConfig;
  stateBase: string;
  progress: ProgressFn;
}

export function checkLabRequest(r: Pick<LabRequest, 'name' | 'mode' | 'sandboxCount'>): void {
  checkLabName(r.name);
  if (r.mode !== 'local' && r.mode !== 'transparent')
    throw new Error(`invalid lab mode ${JSON.stringify(r.mode)}: expected local or transparent`);
  if (!Number.isInteger(r.sandboxCount) || r.sandboxCount < 1 || r.sandboxCount > MAX_SANDBOXES) {
    throw new Error(`invalid sandbox count ${r.sandboxCount}: expected an integer from 1 to ${MAX_SANDBOXES}`);
  }
}

export async function prepare(r: LabRequest): Promise<{ ctx: LabStepContext; state: LabState }> {
  checkLabRequest(r);
  const problems = await labPrerequisites();
  if (problems.length > 0) throw new Error(problems.join('; '));

  const leftovers = await findLeftovers(r.name, r.stateBase);
  if (hasLeftovers(leftovers)) {
    r.progress({
      step: 'cleanup',
      message: `leftovers of an earlier lab ${r.name}: ${leftovers.namespaces.length} namespaces${leftovers.hostLink ? ', host link' : ''}${leftovers.stateDir ? ', state directory' : ''}; removing`,
    });
    await removeLab(r.name, r.stateBase);
  }

  const dir = labDir(r.name, r.stateBase);
  mkdirSync(join(dir, 'logs'), { recursive: true, mode: 0o700 });
  const plan = ADDRESS_PLAN;
  const dedicated = r.config.egress.mode === 'dedicated';
  const ingress = { publicAddress: plan.ingressEip, privateAddress: plan.proxyPrimary };
  const eips = { ingress, egress: dedicated ? { publicAddress: plan.egressEip, privateAddress: plan.proxyEgress } : ingress };

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
  const state: LabState = {
    version: STATE_VERSION,
    name: r.name,
    mode: r.mode,
    createdAt: new Date().toISOString(),
    dir,
    config: r.config,
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
  const ctx: LabStepContext = {
    name: r.name,
    mode: r.mode,
    sandboxCount: r.sandboxCount,
    hostLink: r.hostLink,
    config: r.config,
    progress: r.progress,
    artifacts: renderArtifacts(r.config, inputs),
    hostFiles: proxyHostFiles(r.config, inputs),
  };
  return { ctx, state };
}
