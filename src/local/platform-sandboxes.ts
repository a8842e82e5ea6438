/**
 * The local system's sandboxes from the platform: the service process (platform API + gateway) on the lab's sandbox
 * network, the proxy template built through that API with the E2B SDK (the lab's ingress address and password in its
 * client config), and sandboxes created from it with the SDK. What `up` runs when the sandboxes come from the platform.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sandbox } from 'e2b';
import type { StackConfig } from '../config';
import type { Lab, ProgressFn } from '../lab';
import { builtEntry } from '../lab/dist-path';
import { IFACES } from '../lab/topology';
import type { ServiceConfig } from './service-main';
import { startDetached, waitForLogLine } from './processes';
import { platformStateDir, templateBuildsFile, type LocalSandbox, type LocalState } from './state';
import { writeProxyFacts } from '../platform/dashboard/proxy-facts';
import { buildProxyTemplate } from '../../templates/proxy';

/** The longest life the platform gives a sandbox (24 h): the local system's sandboxes live until `down`. */
const SANDBOX_TIMEOUT_MS = 86_400_000;

/** Where the service keeps its platform state, and the certificates the templates it builds trust. */
export interface ServiceChoices {
  keptBase?: string;
  /** A PEM file the background-built templates trust besides Debian's (the host's store), or none. */
  extraCaCertsFile?: string;
}

export async function startService(
  state: LocalState,
  lab: Lab,
  config: StackConfig,
  gatewayPort: number,
  progress: ProgressFn,
  choices: ServiceChoices = {},
): Promise<void> {
  const stateDir = platformStateDir(state.name, choices.keptBase);
  const service: ServiceConfig = {
    stateDir,
    network: {
      bridgeNamespace: lab.namespace('sbhost'),
      bridge: IFACES.sandboxBridge,
      subnet: lab.plan.sandboxSubnet,
      gateway: lab.plan.sandboxGateway,
      // Under the lab's prefix (the lab's teardown then also removes them after a crash), apart from its nodes: the
      // network treats every namespace with this prefix as one of its own.
      netnsPrefix: `sk-${lab.name}-c`,
      reserved: lab.sandboxes.map((node) => lab.sandboxAddress(node)),
    },
    apiPort: 0,
    gatewayPort,
    brand: config.brand,
    domain: config.gateway.domain,
    buildLimits: config.builds,
    gc: config.gc,
    runtime: config.sandboxHost.runtime,
    runscPlatform: config.sandboxHost.runscPlatform,
    warmPool: config.sandboxHost.warmPool,
    templates: {
      statusFile: templateBuildsFile(state),
      ...(choices.extraCaCertsFile ? { extraCaCertsFile: choices.extraCaCertsFile } : {}),
    },
    proxyFactsFile: proxyFactsFileOf(state),
    // The proxy template's sandboxes reach the proxy's ingress address and port, nothing else.
    stackEgress: { templates: [config.template.alias], proxy: [{ address: lab.ingressEip, port: config.proxy.port }] },
    images: { insecureRegistries: config.images.insecureRegistries, e2bBase: config.images.e2bBase },
    limits: config.limits,
  };
  writeProxyFacts(service.proxyFactsFile as string, { ingress: lab.ingressEip, egress: lab.egressEip, rotatedAt: null });
  const configFile = join(state.dir, 'service.json');
  writeFileSync(configFile, `${JSON.stringify(service, null, 2)}\n`, { mode: 0o600 });
  const p = startDetached(
    'service',
    [process.execPath, builtEntry('local/service-main'), configFile],
    join(state.dir, 'service.log'),
    configFile,
  );
  state.processes.push(p);
  const api = await waitForLogLine(p, /platform API on (http:\/\/\S+)/, 60_000);
  const gw = await waitForLogLine(p, /gateway listening on [^:\s]+:(\d+)/, 15_000);
  state.platform = { url: api[1]!, apiKeyFile: join(stateDir, 'api-key'), stateDir };
  state.gateway = { url: `http://127.0.0.1:${gw[1]}`, port: Number(gw[1]) };
  progress({ step: 'platform', message: `platform API on ${state.platform.url}, gateway on ${state.gateway.url} (pid ${p.pid})` });
}

/** Where the dashboard of the local system's platform reads the proxy's addresses (`rotate` updates it). */
export function proxyFactsFileOf(state: LocalState): string {
  return join(state.dir, 'proxy.json');
}

export function apiKeyOf(state: LocalState): string {
  return readFileSync(state.platform!.apiKeyFile, 'utf8').split('\n')[0]!.trim();
}

export async function buildTemplate(state: LocalState, lab: Lab, config: StackConfig, progress: ProgressFn): Promise<void> {
  const password = readFileSync(lab.snapshot.passwordFile, 'utf8').trim();
  const info = await buildProxyTemplate({
    config,
    target: { serverIp: lab.ingressEip, password },
    mode: state.mode,
    apiUrl: state.platform!.url,
    apiKey: apiKeyOf(state),
    onBuildLogs: (entry) => progress({ step: 'template', message: String(entry.message ?? entry).trim() }),
  });
  state.template = { alias: config.template.alias, templateID: info.templateId };
  progress({ step: 'template', message: `${info.name} built: templateID ${info.templateId}` });
}

export async function createSandboxes(
  state: LocalState,
  count: number,
  config: StackConfig,
  progress: ProgressFn,
): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  const apiKey = apiKeyOf(state);
  const opts = { apiKey, apiUrl: state.platform!.url, sandboxUrl: state.gateway!.url, timeoutMs: SANDBOX_TIMEOUT_MS };
  for (let i = 0; i < count; i++) {
    const sbx = await Sandbox.create(config.template.alias, opts);
    const info = (await (
      await fetch(`${state.platform!.url}/sandboxes/${sbx.sandboxId}`, { headers: { 'x-api-key': apiKey } })
    ).json()) as {
      envdAccessToken: string;
    };
    tokens.set(sbx.sandboxId, info.envdAccessToken);
    const sandbox: LocalSandbox = { sandboxID: sbx.sandboxId, node: '', address: '', agentPort: config.agent.port };
    state.sandboxes.push(sandbox);
    progress({ step: 'sandboxes', message: `${sbx.sandboxId} created from ${config.template.alias}` });
  }
  return tokens;
}
