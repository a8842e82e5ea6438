/**
 * What the proxy templates carry, without the SDK: the rendered files of each mode (src/render), the packages, the
 * ports the started client listens on, and the build's file context.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ClientMode, isCidr, type StackConfig } from '../src/config';
import { renderArtifacts } from '../src/render';

/** The rendered artifacts each mode's template carries. */
export const PROXY_TEMPLATE_FILES: Record<ClientMode, readonly string[]> = {
  local: ['client-local.json', 'client-start-local.sh'],
  transparent: ['client-local.json', 'client-transparent.json', 'nat-chain.sh', 'client-start-transparent.sh'],
};

/** Debian packages each mode installs (iproute2 for `ss`, which the start script and waitForPort use). */
export const PROXY_TEMPLATE_PACKAGES: Record<ClientMode, readonly string[]> = {
  local: ['shadowsocks-libev', 'iproute2'],
  transparent: ['shadowsocks-libev', 'iproute2', 'iptables'],
};

export interface ProxyTarget {
  /** The proxy's ingress address, what the client dials. */
  serverIp: string;
  password: string;
}

/** The ports the started template listens on: 1080, plus the redirect port in transparent mode. */
export function proxyPorts(config: StackConfig, mode: ClientMode): number[] {
  return mode === 'local' ? [config.client.localPort] : [config.client.redirectPort, config.client.localPort];
}

/** Writes the mode's rendered files, with their modes, into `dir` (the build's file context). */
export async function writeProxyContext(dir: string, config: StackConfig, target: ProxyTarget, mode: ClientMode): Promise<void> {
  const wanted = new Set(PROXY_TEMPLATE_FILES[mode]);
  // The host-side inputs do not reach the client files; only serverIp and the password do.
  const artifacts = renderArtifacts(config, { serverIp: target.serverIp, password: target.password, hostNetworks: [] }).filter((a) =>
    wanted.has(a.name),
  );
  for (const a of artifacts) {
    const path = join(dir, a.name);
    await writeFile(path, a.content, { mode: a.mode });
    await chmod(path, a.mode);
  }
}

/** The stack config with more destinations the NAT chain returns; every one must be an IPv4 CIDR. */
export function withBypass(config: StackConfig, cidrs: readonly string[]): StackConfig {
  const bad = cidrs.filter((c) => !isCidr(c));
  if (bad.length > 0)
    throw new Error(`bypassCidrs: got ${bad.map((c) => JSON.stringify(c)).join(', ')}; expected IPv4 CIDRs such as 198.18.0.0/15`);
  if (cidrs.length === 0) return config;
  return { ...config, client: { ...config.client, bypassCidrs: [...config.client.bypassCidrs, ...cidrs] } };
}
