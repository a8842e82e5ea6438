/**
 * The local system's service process: the platform API (on the lab's sandbox network) and the gateway in front of its
 * sandboxes, in one process so the gateway reads the platform's catalog in memory. `up` starts it detached:
 *   node dist/src/local/service-main.js <config.json>
 * It prints `platform API on <url>` and `gateway listening on <host>:<port>` once each serves, and on SIGTERM stops
 * both and removes every sandbox the platform made. On SIGUSR2 (`up` sends it once the core system works) it builds
 * the templates the SDKs ask for in the background (template-builds.ts).
 */
import { readFileSync } from 'node:fs';
import { startGateway } from '../gateway';
import { readProxyFacts } from '../platform/dashboard/proxy-facts';
import { startPlatformOnHost } from '../platform/on-host';
import type { StackEgress } from '../platform/sandboxes/service';
import type { ImageSources } from '../platform/templates';
import { BridgeNetwork, type BridgeNetworkOptions, type RunscPlatform, type RuntimeChoice } from '../runtime';
import { TemplateBuilds } from './template-builds';
import type { BuildLimits, GcSettings, SandboxLimits } from '../config';

export interface ServiceConfig {
  stateDir: string;
  network: BridgeNetworkOptions;
  apiPort: number;
  gatewayPort: number;
  brand: string;
  domain: string;
  /** The background builds: where their states go, and the certificates the templates trust besides Debian's. */
  templates?: { statusFile: string; extraCaCertsFile?: string };
  /** Where `up` and `rotate` write the proxy's addresses for the dashboard. */
  proxyFactsFile?: string;
  /** The stack's template build limits (`builds`). */
  buildLimits?: BuildLimits;
  /** The stack's storage collector settings (`gc`). */
  gc?: GcSettings;
  /** The stack's proxy template and the proxy its sandboxes may reach, and nothing else. */
  stackEgress?: StackEgress;
  /** The stack's sandboxHost.runtime and sandboxHost.runscPlatform. */
  runtime?: RuntimeChoice;
  runscPlatform?: RunscPlatform;
  /** The stack config's `images`: registries allowed over plain HTTP, what `e2bdev/base` means. */
  images?: ImageSources;
  /** The stack's sandboxHost.warmPool. */
  warmPool?: Record<string, number>;
  /** The stack's `limits`. */
  limits?: SandboxLimits;
}

/**
 * The stack's egress whose proxy address is the ingress the proxy facts file names when a sandbox is made, so that
 * `rotate --recreate` (a new proxy host at a new ingress address) needs no restart of the platform; the port, and
 * the address while the file holds no facts, are the configured ones. A sandbox keeps the address it was made with.
 */
function followingProxyFacts(configured: StackEgress, factsFile: string | undefined): StackEgress {
  return {
    templates: configured.templates,
    get proxy() {
      const facts = factsFile ? readProxyFacts(factsFile) : undefined;
      if (facts === undefined || 'problem' in facts) return configured.proxy;
      return configured.proxy.map((target) => ({ ...target, address: facts.ingress }));
    },
  };
}

async function main(configFile: string): Promise<void> {
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as ServiceConfig;
  const log = (line: string) => console.log(`platform: ${line}`);
  const builds = config.templates && new TemplateBuilds({ ...config.templates, log: (line) => console.log(`templates: ${line}`) });
  const platform = await startPlatformOnHost({
    stateDir: config.stateDir,
    host: '127.0.0.1',
    port: config.apiPort,
    network: new BridgeNetwork(config.network),
    ...(config.runtime ? { runtime: config.runtime } : {}),
    ...(config.runscPlatform ? { runscPlatform: config.runscPlatform } : {}),
    proxyFactsFile: config.proxyFactsFile,
    ...(config.buildLimits ? { buildLimits: config.buildLimits } : {}),
    ...(config.gc ? { gc: config.gc } : {}),
    ...(config.stackEgress ? { stackEgress: followingProxyFacts(config.stackEgress, config.proxyFactsFile) } : {}),
    ...(config.images ? { images: config.images } : {}),
    ...(config.warmPool ? { warmPool: config.warmPool } : {}),
    ...(config.limits ? { limits: config.limits } : {}),
    log,
    ...(builds ? { pendingTemplates: (known) => builds.resolver(known) } : {}),
  });
  console.log(`platform API on ${platform.url}`);
  process.on('SIGUSR2', () => {
    void builds?.buildAll({ apiUrl: platform.url, apiKey: platform.apiKey });
  });
  const gateway = await startGateway({
    catalog: platform.catalog,
    host: '127.0.0.1',
    port: config.gatewayPort,
    brand: config.brand,
    domain: config.domain,
    // `api.{domain}` is the platform (E2B_DOMAIN's API name), as on a host with a DNS zone: both stay on loopback.
    apiUpstream: { host: '127.0.0.1', port: Number(new URL(platform.url).port) },
    signedUrlOwner: (q) => platform.sandboxes.signedUrlOwner(q),
    metricsPort: 0,
  });
  console.log(`gateway listening on ${gateway.host}:${gateway.port}`);
  console.log(`gateway metrics on ${gateway.host}:${gateway.metricsPort}/metrics`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('stopping: gateway, platform, sandboxes');
    await gateway.close(1_000).catch((err: Error) => console.log(`gateway: ${err.message}`));
    await platform.close({ killSandboxes: true }).catch((err: Error) => console.log(`platform: ${err.message}`));
    console.log('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) {
  main(process.argv[2] ?? '').catch((err: Error) => {
    console.error(`service: ${err.stack ?? err.message}`);
    process.exit(1);
  });
}
