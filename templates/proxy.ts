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
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template, waitForPort, type BuildInfo, type LogEntry, type TemplateClass } from 'e2b';
import type { ClientMode, StackConfig } from '../src/config';
import { SANDBOX_DIR } from '../src/render';
import { PROXY_TEMPLATE_FILES, PROXY_TEMPLATE_PACKAGES, type ProxyTarget, proxyPorts, withBypass, writeProxyContext } from './proxy-files';

export * from './proxy-files';

/** The template definition over a file context that `writeProxyContext` filled. */
export function proxyTemplate(config: StackConfig, mode: ClientMode, contextDir: string): TemplateClass {
  let t = Template({ fileContextPath: contextDir })
    .fromDebianImage('bookworm')
    .aptInstall([...PROXY_TEMPLATE_PACKAGES[mode]], { noInstallRecommends: true });
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
  mode: ClientMode;
  /** Default: the stack's template alias. */
  alias?: string;
  apiUrl?: string;
  apiKey?: string;
  onBuildLogs?: (entry: LogEntry) => void;
  skipCache?: boolean;
  /**
   * Destinations the transparent NAT chain must leave alone on top of the stack's `client.bypassCidrs`: the networks
   * the platform and the gateway reach the sandbox from (its replies on connections opened before the chain would
   * otherwise be picked up as new ones and redirected).
   */
  bypassCidrs?: string[];
}

/** Renders the files into a temporary context (0700, removed afterwards) and builds the template with the SDK. */
export async function buildProxyTemplate(o: BuildProxyTemplateOptions): Promise<BuildInfo> {
  const context = await mkdtemp(join(tmpdir(), 'sandbox-kit-template-'));
  try {
    const config = withBypass(o.config, o.bypassCidrs ?? []);
    await writeProxyContext(context, config, o.target, o.mode);
    return await Template.build(proxyTemplate(config, o.mode, context), {
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
