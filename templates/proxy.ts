/**
 * The sandbox template that carries the Shadowsocks client, defined with the E2B SDK's Template builder, so the same
 * definition builds on the kit's platform or on any E2B-compatible service. Its files are the stack's rendered
 * artifacts (src/render), written into a fresh file context for the build; nothing here is written by hand.
 *
 * local:       shadowsocks-libev, the client config (0600), ss-local; ready when 1080 listens.
 * transparent: also iptables and the NAT-chain script (0755); ss-redir on 12345, the chain, ss-local on 1080; ready
 *              when both listen.
 * The start command runs as root: it writes /run/sandbox-kit and (transparent) changes the sandbox's NAT table.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template, waitForPort, type BuildInfo, type LogEntry, type TemplateClass } from 'e2b';
import type { StackConfig } from '../src/config';
import { renderArtifacts, SANDBOX_DIR, type ClientMode } from '../src/render';

export type ProxyMode = ClientMode;

/** The rendered artifacts each mode's template carries. */
export const PROXY_TEMPLATE_FILES: Record<ProxyMode, readonly string[]> = {
  local: ['client-local.json', 'client-start-local.sh'],
  transparent: ['client-local.json', 'client-transparent.json', 'nat-chain.sh', 'client-start-transparent.sh'],
};

/** Debian packages each mode installs (iproute2 for `ss`, which the start script and waitForPort use). */
export const PROXY_TEMPLATE_PACKAGES: Record<ProxyMode, readonly string[]> = {
  local: ['shadowsocks-libev', 'iproute2'],
  transparent: ['shadowsocks-libev', 'iproute2', 'iptables'],
};

export interface ProxyTarget {
  /** The proxy's ingress address, what the client dials. */
  serverIp: string;
  password: string;
}

/** The ports the started template listens on: 1080, plus the redirect port in transparent mode. */
export function proxyPorts(config: StackConfig, mode: ProxyMode): number[] {
  return mode === 'local' ? [config.client.localPort] : [config.client.redirectPort, config.client.localPort];
}

/** Writes the mode's rendered files, with their modes, into `dir` (the build's file context). */
export async function writeProxyContext(dir: string, config: StackConfig, target: ProxyTarget, mode: ProxyMode): Promise<void> {
  const wanted = new Set(PROXY_TEMPLATE_FILES[mode]);
  // The host-side inputs do not reach the client files; only serverIp and the password do.
  const artifacts = renderArtifacts(config, { serverIp: target.serverIp, password: target.password, hostNetworks: [] }).filter((a) => wanted.has(a.name));
  for (const a of artifacts) {
    const path = join(dir, a.name);
    await writeFile(path, a.content, { mode: a.mode });
    await chmod(path, a.mode);
  }
}

/** The template definition over a file context that `writeProxyContext` filled. */
export function proxyTemplate(config: StackConfig, mode: ProxyMode, contextDir: string): TemplateClass {
  let t = Template({ fileContextPath: contextDir }).fromDebianImage('bookworm').aptInstall([...PROXY_TEMPLATE_PACKAGES[mode]], { noInstallRecommends: true });
  for (const name of PROXY_TEMPLATE_FILES[mode]) {
    t = t.copy(name, `${SANDBOX_DIR}/${name}`, { user: 'root', mode: name.endsWith('.sh') ? 0o755 : 0o600 });
  }
  const ready = proxyPorts(config, mode)
    .map((p) => waitForPort(p).getCmd())
    .join(' && ');
  return t.setUser('root').setStartCmd(`${SANDBOX_DIR}/client-start-${mode}.sh`, ready);
}

export interface BuildProxyTemplateOptions {
  config: StackConfig;
  target: ProxyTarget;
  mode: ProxyMode;
  /** Default: the stack's template alias. */
  alias?: string;
  apiUrl?: string;
  apiKey?: string;
  onBuildLogs?: (entry: LogEntry) => void;
  skipCache?: boolean;
}

/** Renders the files into a temporary context (0700, removed afterwards) and builds the template with the SDK. */
export async function buildProxyTemplate(o: BuildProxyTemplateOptions): Promise<BuildInfo> {
  const context = await mkdtemp(join(tmpdir(), 'sandbox-kit-template-'));
  try {
    await writeProxyContext(context, o.config, o.target, o.mode);
    return await Template.build(proxyTemplate(o.config, o.mode, context), {
      alias: o.alias ?? o.config.template.alias,
      memoryMB: o.config.template.memoryMB,
      cpuCount: o.config.template.cpuCount,
      onBuildLogs: o.onBuildLogs,
      ...(o.apiUrl ? { apiUrl: o.apiUrl } : {}),
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      ...(o.skipCache ? { skipCache: true } : {}),
    });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
