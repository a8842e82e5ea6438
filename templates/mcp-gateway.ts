/**
 * The `mcp-gateway` template: the one the E2B SDK creates a sandbox from when `Sandbox.create({ mcp })` names no
 * template. Debian with the catalog's npm servers preinstalled (so sandboxes with MCP start without a download), the
 * images of any image servers asked for (placed by the kit's template builder at the end of the build), and the
 * `mcp-gateway` command, which runs the kit's gateway bundle with the node the platform mounts into every sandbox.
 * Defined with the E2B Template builder: it builds on the kit's platform or any E2B-compatible one.
 */
import { type BuildInfo, type BuildOptions, Template, type TemplateClass } from 'e2b';
import { MCP_TEMPLATE } from '../src/contract/mcp';
import { builtinCatalog } from '../src/mcp/catalog/load';
import type { Catalog } from '../src/mcp/catalog/schema';
import { installPlan } from '../src/mcp/gateway/pull';
import { preinstallCommand } from '../src/mcp/launch/image-dir';
import { DEFAULT_SERVERS_DIR } from '../src/mcp/launch/resolve-bin';
import { GATEWAY_COMMAND_PATH, gatewayWrapperScript } from '../src/mcp/template/wrapper';
import { templateWithContextFor, trustExtraCa } from './extra-ca';

/**
 * The npm that installs the servers at build time, fetched from the registry and checked against its published
 * sha512: Debian's own npm package drags in some 400 node-* packages, minutes of apt for a one-off install.
 */
const NPM = {
  url: 'https://registry.npmjs.org/npm/-/npm-10.9.2.tgz',
  sha512:
    '8ab88f10f224a0c614cb717a7f7c30499014f77134120e9c1f0211ea3cf3397592cbe483feb38e0c4b3be1c54e347292c76a1b5edb94a3289d5448484ab8ac81',
};

/** The build settings (the seed's template options: alias, memoryMB, cpuCount). */
export const MCP_GATEWAY_TEMPLATE = { alias: MCP_TEMPLATE, memoryMB: 1024, cpuCount: 1 } as const;

export interface McpTemplateOptions {
  /**
   * Catalog servers to preinstall (default: every npm server of the catalog). An image server's image is named in the
   * template's preinstall list (src/mcp/launch/image-dir.ts), which the kit's template builder fetches and places.
   */
  servers?: string[];
  catalog?: Catalog;
  /** Debian suite of the base image. */
  debian?: string;
  /**
   * A PEM file of certificates to trust besides Debian's (a TLS-inspecting proxy between the build and the npm
   * registry): templates/extra-ca.ts. npm is told to use the system store as well.
   */
  extraCaCertsFile?: string;
}

export function mcpGatewayTemplate(options: McpTemplateOptions = {}): TemplateClass {
  const catalog = options.catalog ?? builtinCatalog();
  const servers = options.servers ?? Object.keys(catalog).filter((name) => 'npm' in catalog[name].run);
  const { npm: specs, images } = installPlan(servers, catalog);
  const wrapper = Buffer.from(gatewayWrapperScript()).toString('base64');
  let template = trustExtraCa(
    templateWithContextFor(options.extraCaCertsFile)
      .fromDebianImage(options.debian ?? 'bookworm')
      // Debian's node runs npm at build time only; at run time the servers run with the kit's node.
      .aptInstall(['ca-certificates', 'curl', 'nodejs'])
      .runCmd(`echo ${wrapper} | base64 -d > ${GATEWAY_COMMAND_PATH} && chmod 0755 ${GATEWAY_COMMAND_PATH}`, { user: 'root' }),
    options.extraCaCertsFile,
  );
  if (specs.length > 0) {
    template = template.runCmd(
      [
        `curl -fsSL ${NPM.url} -o /tmp/npm.tgz`,
        `echo '${NPM.sha512}  /tmp/npm.tgz' | sha512sum -c --quiet`,
        'mkdir -p /tmp/npm && tar -xzf /tmp/npm.tgz -C /tmp/npm',
        `mkdir -p ${DEFAULT_SERVERS_DIR} && cd ${DEFAULT_SERVERS_DIR} && echo '{"private":true}' > package.json`,
        // node trusts its own CA list only; the system store holds any extra certificates too.
        `NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt node /tmp/npm/package/bin/npm-cli.js install --no-audit --no-fund --omit=dev --loglevel=error ${specs.join(' ')}`,
        'rm -rf /tmp/npm /tmp/npm.tgz /root/.npm',
      ].join(' && '),
      { user: 'root' },
    );
  }
  if (images.length > 0) template = template.runCmd(preinstallCommand(images), { user: 'root' });
  return template;
}

/**
 * Builds the template through an E2B-compatible API (the kit's platform by default when E2B_API_URL points at it);
 * `sandbox-kit template build --template mcp-gateway` calls this.
 */
export function buildMcpGatewayTemplate(
  connection: Pick<BuildOptions, 'apiKey' | 'apiUrl' | 'domain' | 'requestTimeoutMs' | 'onBuildLogs' | 'skipCache'> & {
    alias?: string;
  } = {},
  options: McpTemplateOptions = {},
): Promise<BuildInfo> {
  return Template.build(mcpGatewayTemplate(options), {
    ...MCP_GATEWAY_TEMPLATE,
    ...connection,
    alias: connection.alias ?? MCP_GATEWAY_TEMPLATE.alias,
  });
}
