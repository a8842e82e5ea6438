/**
 * `sandbox-kit status`: what of the local system is running and healthy, read from the state files and probed live:
 * the proxy (the lab's namespaces, processes and ss-server), the gateway, and each sandbox's agent through the gateway.
 */
import { existsSync, readFileSync } from 'node:fs';
import { attachLab, type LabStatus } from '../lab';
import { unaryCall } from './gateway-checks';
import { isOurs } from './processes';
import { readLocalState, readSandboxTokens, templateBuildsFile } from './state';
import type { TemplateBuildState } from './template-builds';

export interface SandboxHealth {
  sandboxID: string;
  node: string;
  address: string;
  healthy: boolean;
  detail: string;
}

export interface LocalStatus {
  name: string;
  up: boolean;
  healthy: boolean;
  readyAt?: string;
  mode?: string;
  proxy?: { healthy: boolean; ingressIp: string; egressIp: string; serverPid?: number; detail: string };
  platform?: { healthy: boolean; url: string; detail: string };
  gateway?: { healthy: boolean; url?: string; pid?: number; detail: string };
  sandboxes: SandboxHealth[];
  /**
   * The templates built in the background after `up` (waiting, building, ready, failed). Not part of `healthy`: the
   * core system works without them, and a create that needs one says why it cannot have it yet.
   */
  templates: TemplateBuildState[];
  /** Everything that is not healthy, one phrase each. */
  problems: string[];
}

function proxyHealth(lab: LabStatus): NonNullable<LocalStatus['proxy']> {
  const missing = lab.namespaces.filter((n) => !n.present).map((n) => n.node);
  const dead = lab.processes.filter((p) => !p.alive).map((p) => p.role);
  const serverRunning = lab.server?.state === 'running';
  const detail = [
    missing.length > 0 ? `namespaces missing: ${missing.join(', ')}` : '',
    dead.length > 0 ? `processes dead: ${dead.join(', ')}` : '',
    serverRunning ? '' : `ss-server ${lab.server?.state ?? 'unknown'}`,
  ]
    .filter((x) => x !== '')
    .join('; ');
  return {
    healthy: lab.healthy,
    ingressIp: lab.ingressEip,
    egressIp: lab.egressEip,
    ...(lab.server?.pid ? { serverPid: lab.server.pid } : {}),
    detail: detail || `ss-server running (pid ${lab.server?.pid}), started ${lab.server?.starts} time(s)`,
  };
}

export async function localStatus(name: string, stateBase?: string): Promise<LocalStatus> {
  const state = readLocalState(name, stateBase);
  if (!state) return { name, up: false, healthy: false, sandboxes: [], templates: [], problems: [`the local system ${name} is not up`] };
  const problems: string[] = [];

  let proxy: LocalStatus['proxy'];
  try {
    proxy = proxyHealth(await attachLab(name).status());
  } catch (err) {
    proxy = { healthy: false, ingressIp: '', egressIp: '', detail: (err as Error).message };
  }
  if (!proxy.healthy) problems.push(`proxy: ${proxy.detail}`);

  // The gateway runs alone, or in the service process with the platform.
  const gatewayProcess = state.processes.find((p) => p.role === 'gateway' || p.role === 'service');
  const gatewayRunning = gatewayProcess !== undefined && isOurs(gatewayProcess);
  const gateway: NonNullable<LocalStatus['gateway']> = {
    healthy: gatewayRunning && state.gateway !== undefined,
    ...(state.gateway ? { url: state.gateway.url } : {}),
    ...(gatewayProcess ? { pid: gatewayProcess.pid } : {}),
    detail: gatewayRunning ? 'running' : gatewayProcess ? `process ${gatewayProcess.pid} is gone` : 'never started',
  };

  let platform: LocalStatus['platform'];
  if (state.platform) {
    // An authenticated list: the API answers only when it runs and its store (Redis) does.
    const key = readFileSync(state.platform.apiKeyFile, 'utf8').split('\n')[0]!.trim();
    const answer = await fetch(`${state.platform.url}/v2/sandboxes`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5_000) })
      .then(async (r) => ({ status: r.status, count: r.ok ? ((await r.json()) as unknown[]).length : 0 }))
      .catch((err: Error) => ({ status: 0, count: 0, error: err.message }));
    platform = {
      healthy: answer.status === 200,
      url: state.platform.url,
      detail:
        answer.status === 200
          ? `API answers, ${answer.count} sandbox(es) listed`
          : `HTTP ${answer.status}${'error' in answer ? `: ${answer.error}` : ''}`,
    };
    if (!platform.healthy) problems.push(`platform: ${platform.detail}`);
  }

  let tokens = new Map<string, string>();
  try {
    tokens = readSandboxTokens(state);
  } catch (err) {
    problems.push(`catalog: ${(err as Error).message}`);
  }
  const sandboxes: SandboxHealth[] = [];
  for (const s of state.sandboxes) {
    let healthy = false;
    let detail = 'not checked: the gateway is not running';
    if (gateway.healthy && state.gateway) {
      // A Stat of / through the gateway: the agent answers only if it runs and the gateway routes to it.
      const target = {
        gatewayUrl: state.gateway.url,
        brand: state.config.brand,
        sandboxID: s.sandboxID,
        agentPort: s.agentPort,
        token: tokens.get(s.sandboxID) ?? '',
      };
      const answer = await unaryCall(target, '/filesystem.Filesystem/Stat', { path: '/' }).catch((err: Error) => ({
        status: 0,
        body: err.message,
      }));
      healthy = answer.status === 200;
      detail = healthy ? 'agent answers through the gateway' : `HTTP ${answer.status}: ${JSON.stringify(answer.body)}`;
    }
    if (!healthy) problems.push(`sandbox ${s.sandboxID}: ${detail}`);
    sandboxes.push({ sandboxID: s.sandboxID, node: s.node, address: s.address, healthy, detail });
  }
  if (!gateway.healthy) problems.push(`gateway: ${gateway.detail}`);
  if (!state.readyAt) problems.push('up has not finished (or crashed before its checks passed)');

  return {
    name,
    up: true,
    healthy: problems.length === 0,
    ...(state.readyAt ? { readyAt: state.readyAt } : {}),
    mode: state.mode,
    proxy,
    ...(platform ? { platform } : {}),
    gateway,
    sandboxes,
    templates: existsSync(templateBuildsFile(state))
      ? (JSON.parse(readFileSync(templateBuildsFile(state), 'utf8')) as TemplateBuildState[])
      : [],
    problems,
  };
}
