/**
 * `sandbox-kit up`: the whole system on one machine, left running in the background. Steps, each timed:
 * - preflight, then lab: the proxy host, the internet, the sandbox network and the lab's host link into the root
 *   namespace;
 * - by default (sandboxes from the platform): platform (one service process with the platform API and the gateway on
 *   the lab's sandbox network; the lab keeps one sandbox node of its own for the egress check and the rotation
 *   probe), template (the proxy template, built through the API with the E2B SDK), sandboxes (created from it);
 * - with `sandboxesFrom: 'lab'` (no platform, no template): sandboxes (an agent started in each of the lab's own
 *   sandbox namespaces), gateway (in the root namespace over the host link, reading a file catalog);
 * - check: egress through the proxy, from the lab and from inside each platform sandbox; then per sandbox a command,
 *   a ListDir and a wrong token through the gateway.
 * A second `up` of a healthy system changes nothing and says so; one over the leftovers of a crash removes them first.
 */
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ClientMode, loadStackConfig, type StackConfig } from '../config';
import { attachLab, type EgressCheck, type Lab, labExists, labUp, type ProgressFn } from '../lab';
import { egressCurl } from './egress-command';
import { builtEntry } from '../lab/dist-path';
import { newAccessToken, newSandboxID } from '../platform/sandboxes/ids';
import { writeLayerFiles } from '../lab/etc-layer';
import { spawnDetached } from '../lab/run';
import { downLocal } from './down';
import { checkThroughGateway, type GatewayCheck, runCommand, sandboxTarget } from './gateway-checks';
import { buildTemplate, createSandboxes, startService } from './platform-sandboxes';
import { localPrerequisites, PreflightError } from './preflight';
import { startDetached, waitForLogLine } from './processes';
import { sandboxUser } from './sandbox-user';
import {
  DEFAULT_LOCAL_NAME,
  type LocalSandbox,
  type LocalState,
  newLocalState,
  readLocalState,
  readSandboxTokens,
  writeLocalState,
  writeSandboxTokens,
} from './state';
import { localStatus } from './status';
import { hostCaStore } from './template-builds';
import { isOurs } from './processes';
import { signalProcess } from '../util/signal';
import { timedStep } from './steps';
import { waitForHttp } from './wait-http';

/** Where the local system's sandboxes come from (see UpOptions.sandboxesFrom); the first is the default. */
export const SANDBOX_SOURCES = ['platform', 'lab'] as const;
export type SandboxSource = (typeof SANDBOX_SOURCES)[number];

export interface UpOptions {
  /** The system's name; its lab's namespaces are sk-<name>-*. Default `local`. */
  name?: string;
  mode?: ClientMode;
  sandboxes?: number;
  /** Gateway port on 127.0.0.1; default the stack's gateway.port; 0 picks a free one. */
  gatewayPort?: number;
  config?: StackConfig;
  onProgress?: ProgressFn;
  /** Where the state lives (default /run/sandbox-kit/local). */
  stateBase?: string;
  /**
   * Where the sandboxes come from: `platform` (containers the platform creates from the proxy template it built) or
   * `lab` (the lab's own sandbox namespaces, an agent started in each). Default platform.
   */
  sandboxesFrom?: SandboxSource;
  /** Where the platform's state outlives `down` (default /var/lib/sandbox-kit/local): the template cache. */
  keptBase?: string;
  /** The templates built in the background trust the host's CA store (default true; templates/extra-ca.ts). */
  hostCaCerts?: boolean;
  /** Build mcp-gateway and code-interpreter-v1 in the background once the system is up (default true). */
  templates?: boolean;
}

export interface UpResult {
  state: LocalState;
  /** True when the system was already up and healthy and nothing was changed. */
  warm: boolean;
  egress: EgressCheck;
  gatewayCheck: GatewayCheck;
}

/** The checks `up` runs last, also on a warm start: egress through the proxy, then the gateway per sandbox. */
async function finalChecks(
  state: LocalState,
  lab: Lab,
  progress: ProgressFn,
): Promise<{ egress: EgressCheck; gatewayCheck: GatewayCheck }> {
  const egress = await lab.egressCheck();
  progress({
    step: 'check',
    message: `egress from ${egress.directFrom} directly: ${egress.direct}; through the proxy: ${egress.proxied} (expected ${egress.expectedEgress})`,
  });
  if (!egress.ok) throw new Error(`the egress check failed: through the proxy ${egress.proxied}, expected ${egress.expectedEgress}`);
  const tokens = readSandboxTokens(state);
  let gatewayCheck: GatewayCheck | undefined;
  for (const s of state.platform ? state.sandboxes : []) {
    // The seed's check, in each platform sandbox: curl through the proxy shows the proxy's egress address.
    const seen = await runCommand(sandboxTarget(state.gateway!.url, s, tokens.get(s.sandboxID)!), egressCurl(lab));
    progress({
      step: 'check',
      message: `${s.sandboxID}: curl through the proxy shows ${seen.stdout.trim() || `nothing (exit ${seen.exitCode})`}`,
    });
    if (seen.stdout.trim() !== egress.expectedEgress)
      throw new Error(
        `sandbox ${s.sandboxID} does not leave through the proxy: it shows ${seen.stdout.trim() || `nothing (exit ${seen.exitCode})`}, expected ${egress.expectedEgress}`,
      );
  }
  for (const s of state.sandboxes) {
    gatewayCheck = await checkThroughGateway(sandboxTarget(state.gateway!.url, s, tokens.get(s.sandboxID)!));
    progress({
      step: 'check',
      message: `${s.sandboxID} through the gateway: command ${gatewayCheck.command}; ListDir ${gatewayCheck.listDir}; wrong token ${gatewayCheck.wrongToken}`,
    });
    if (!gatewayCheck.ok) throw new Error(`the gateway check of ${s.sandboxID} failed`);
  }
  return { egress, gatewayCheck: gatewayCheck! };
}

/**
 * Tells the service to build the templates the SDKs ask for (mcp-gateway, code-interpreter-v1) in the background,
 * now that the core system works; those already ready are skipped, so a warm `up` retries only a failed one.
 */
function startTemplateBuilds(state: LocalState, progress: ProgressFn): void {
  const service = state.processes.find((p) => p.role === 'service');
  if (!service || !isOurs(service)) return;
  if (!signalProcess(service.pid, 'SIGUSR2')) return;
  progress({
    step: 'templates',
    message: "building mcp-gateway and code-interpreter-v1 in the background; 'sandbox-kit status' shows their progress",
  });
}

export async function upLocal(options: UpOptions = {}): Promise<UpResult> {
  const name = options.name ?? DEFAULT_LOCAL_NAME;
  const config = options.config ?? loadStackConfig({});
  const mode = options.mode ?? config.template.mode;
  const progress = options.onProgress ?? (() => undefined);
  const timings: Record<string, number> = {};

  await timedStep('preflight', progress, timings, async () => {
    const problems = await localPrerequisites();
    if (problems.length > 0) throw new PreflightError(problems);
    progress({ step: 'preflight', message: 'root, Debian tools and the built project are present' });
  });

  const existing = readLocalState(name, options.stateBase);
  if (existing?.readyAt) {
    const status = await localStatus(name, options.stateBase);
    if (status.healthy) {
      progress({
        step: 'warm',
        message: `the local system ${name} has been up since ${existing.readyAt} and is healthy: nothing to build`,
      });
      const checks = await finalChecks(existing, attachLab(name), progress);
      if (options.templates !== false) startTemplateBuilds(existing, progress);
      return { state: existing, warm: true, ...checks };
    }
    progress({ step: 'cleanup', message: `the local system ${name} is up but not healthy (${status.problems.join('; ')}); rebuilding it` });
  }
  if (existing || (await labExists(name))) {
    const removed = await downLocal(name, { stateBase: options.stateBase });
    if (removed.anything) progress({ step: 'cleanup', message: `removed the leftovers of an earlier run: ${removed.summary}` });
  }

  const state = newLocalState(name, mode, config, options.stateBase);
  writeLocalState(state);
  try {
    const fromPlatform = (options.sandboxesFrom ?? 'platform') === 'platform';
    // From the platform, the lab keeps one sandbox node of its own: the egress check and the rotation probe run there.
    const labSandboxes = fromPlatform ? 1 : (options.sandboxes ?? 2);
    const lab = await timedStep('lab', progress, timings, () =>
      labUp({ name, mode, sandboxes: labSandboxes, hostLink: true, config, onProgress: progress }),
    );
    if (fromPlatform) {
      await timedStep('platform', progress, timings, async () => {
        const extraCaCertsFile = options.hostCaCerts === false ? undefined : hostCaStore();
        await startService(state, lab, config, options.gatewayPort ?? config.gateway.port, progress, {
          keptBase: options.keptBase,
          extraCaCertsFile,
        });
        writeLocalState(state);
      });
      await timedStep('template', progress, timings, async () => {
        await buildTemplate(state, lab, config, progress);
        writeLocalState(state);
      });
      await timedStep('sandboxes', progress, timings, async () => {
        const made = await createSandboxes(state, options.sandboxes ?? 2, config, progress);
        writeSandboxTokens(state, made);
        writeLocalState(state);
      });
      const checks = await timedStep('check', progress, timings, () => finalChecks(state, lab, progress));
      state.timings = timings;
      state.readyAt = new Date().toISOString();
      writeLocalState(state);
      if (options.templates !== false) startTemplateBuilds(state, progress);
      return { state, warm: false, ...checks };
    }

    const tokens = new Map<string, string>();
    await timedStep('sandboxes', progress, timings, async () => {
      const user = sandboxUser(
        config.agent.defaultUser,
        readFileSync('/etc/passwd', 'utf8'),
        readFileSync('/etc/group', 'utf8'),
        join(state.dir, 'home', config.agent.defaultUser),
      );
      if (user.files.length > 0) {
        mkdirSync(user.home, { recursive: true, mode: 0o750 });
        chownSync(user.home, user.uid, user.gid);
        for (const node of lab.sandboxes) writeLayerFiles(lab.snapshot.etcLayers[node]!, user.files);
        progress({ step: 'sandboxes', message: `sandbox user ${user.name} (uid ${user.uid}, home ${user.home}) in the sandboxes' /etc` });
      }
      const cli = builtEntry('cli/main');
      for (const node of lab.sandboxes) {
        const sandbox: LocalSandbox = { sandboxID: newSandboxID(), node, address: lab.sandboxAddress(node), agentPort: config.agent.port };
        const token = newAccessToken();
        tokens.set(sandbox.sandboxID, token);
        const tokenFile = join(state.dir, `${node}.token`);
        writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
        const argv = [process.execPath, cli, 'agent', '--port', String(sandbox.agentPort), '--token-file', tokenFile];
        argv.push('--default-user', user.name, '--brand', config.brand);
        // The lab's teardown stops every process in the sandbox's namespace; nothing to record here.
        spawnDetached(lab.argvIn(node, argv), join(state.dir, `agent-${node}.log`));
        await waitForHttp(`http://${sandbox.address}:${sandbox.agentPort}/health`, 204);
        state.sandboxes.push(sandbox);
        progress({ step: 'sandboxes', message: `${sandbox.sandboxID} in ${node} (${sandbox.address}): agent on ${sandbox.agentPort}` });
      }
      writeSandboxTokens(state, tokens);
      writeLocalState(state);
    });

    await timedStep('gateway', progress, timings, async () => {
      const cli = builtEntry('cli/main');
      const port = options.gatewayPort ?? config.gateway.port;
      const argv = [
        process.execPath,
        cli,
        'gateway',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--catalog',
        `file:${state.catalogFile}`,
      ];
      argv.push('--brand', config.brand, '--domain', config.gateway.domain);
      const gateway = startDetached('gateway', argv, join(state.dir, 'gateway.log'), state.catalogFile);
      state.processes.push(gateway);
      writeLocalState(state);
      const match = await waitForLogLine(gateway, /gateway listening on [^:\s]+:(\d+)/);
      const actual = Number(match[1]);
      state.gateway = { url: `http://127.0.0.1:${actual}`, port: actual };
      writeLocalState(state);
      progress({
        step: 'gateway',
        message: `listening on ${state.gateway.url} (pid ${gateway.pid}), ${state.sandboxes.length} sandboxes in its catalog`,
      });
    });

    const checks = await timedStep('check', progress, timings, () => finalChecks(state, lab, progress));
    state.timings = timings;
    state.readyAt = new Date().toISOString();
    writeLocalState(state);
    return { state, warm: false, ...checks };
  } catch (err) {
    progress({ step: 'cleanup', message: `up failed (${(err as Error).message.split('\n')[0]}); removing what was built` });
    await downLocal(name, { stateBase: options.stateBase }).catch(() => undefined);
    throw err;
  }
}
