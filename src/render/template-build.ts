import type { StackConfig } from '../config';
import { stringify } from 'yaml';
import { renderClientConfig, type ClientTarget } from './client-config';
import { renderClientStart } from './client-start';
import { renderNatChain } from './nat-chain';
import { SANDBOX_HOST_PATHS as P } from './sandbox-host-paths';

/** What the build asks the platform API (with the key) until it answers: the API is up and the key is accepted. */
export const PLATFORM_READY_PATH = '/templates';
/** How long the build waits for the platform API (cloud-init installs packages and the bundle first). */
export const PLATFORM_WAIT_SECONDS = 900;

/**
 * What a template build on a sandbox host is given: the proxy's ingress address, its password, and the stack's
 * settings as a stack file (the template command reads Pulumi.<stack>.yaml like everywhere else). Holds the password:
 * travels only on stdin or in a 0600 file.
 */
export interface TemplateBuildInput {
  serverIp: string;
  password: string;
  /** Pulumi.<stack>.yaml text of the stack's plain settings (renderStackFile). */
  stackFile: string;
}

/** The stack name the host-side build reads its settings under. */
export const HOST_BUILD_STACK = 'host';

/**
 * Builds the proxy template on this host through its own platform API, with the same `sandbox-kit template build`
 * anyone runs against any E2B-compatible API. The input arrives on stdin as one JSON object (TemplateBuildInput): the
 * stack file and a Pulumi.yaml go to a 0700 directory, the password into a 0600 file and from there into the
 * environment (SANDBOX_KIT_PROXY_PASSWORD), never into a command line; the API key is read from its 0600 file.
 */
export function renderBuildTemplateScript(config: StackConfig): string {
  return `#!/bin/sh
# Builds the sandbox-kit proxy template through this host's platform API.
# stdin: {"serverIp": "...", "password": "...", "stackFile": "..."}
set -eu

DIR=\${SANDBOX_KIT_TEMPLATE_DIR:-${P.templateDir}}
API=http://127.0.0.1:${config.sandboxHost.apiPort}
WAIT_SECONDS=${PLATFORM_WAIT_SECONDS}

umask 077
mkdir -p "$DIR"
chmod 0700 "$DIR"
${P.node} -e '
const fs = require("fs");
const dir = process.argv[1];
const input = JSON.parse(fs.readFileSync(0, "utf8"));
for (const key of ["serverIp", "password", "stackFile"]) {
  if (typeof input[key] !== "string" || input[key] === "") throw new Error("template input: " + key + " missing");
}
fs.writeFileSync(dir + "/password", input.password, { mode: 0o600 });
fs.writeFileSync(dir + "/server-ip", input.serverIp + "\\n");
fs.writeFileSync(dir + "/Pulumi.yaml", "name: sandbox-kit\\nruntime: nodejs\\n");
fs.writeFileSync(dir + "/Pulumi.${HOST_BUILD_STACK}.yaml", input.stackFile);
' "$DIR"

waited=0
until curl -fsS -o /dev/null -H "X-API-Key: $(head -n 1 ${P.apiKey})" "$API${PLATFORM_READY_PATH}"; do
  if [ "$waited" -ge "$WAIT_SECONDS" ]; then
    echo "build-template: the platform API at $API did not answer within $WAIT_SECONDS s" >&2
    exit 1
  fi
  if [ $((waited % 30)) -eq 0 ]; then echo "build-template: waiting for the platform API at $API ($waited s)"; fi
  sleep 5
  waited=$((waited + 5))
done

cd "$DIR"
SANDBOX_KIT_PROXY_PASSWORD=$(cat "$DIR/password")
export SANDBOX_KIT_PROXY_PASSWORD
exec ${P.node} ${P.cli} template build --stack ${HOST_BUILD_STACK} --server-ip "$(cat "$DIR/server-ip")" --api-url "$API" --api-key-file ${P.apiKey}
`;
}

/** The settings the proxy template is made from; every other section (egress above all) leaves it alone. */
export const TEMPLATE_SECTIONS = ['proxy', 'client', 'template'] as const;

/**
 * The template's settings as a Pulumi.<stack>.yaml for the host-side build (no secret is in StackConfig); the other
 * sections keep their defaults there, so a change elsewhere (an egress rotation) changes nothing the build sees.
 */
export function renderStackFile(config: StackConfig): string {
  const sections: Record<string, unknown> = {};
  for (const key of TEMPLATE_SECTIONS) sections[`sandbox-kit:${key}`] = config[key];
  return stringify({ config: sections }, { lineWidth: 0 });
}

/** The proxy client files the template carries, by name (the client configs hold the password). */
export type TemplateFiles = Record<string, string>;

/**
 * The proxy client files of the template, rendered for the proxy's ingress address and password: what decides
 * whether the built template is still right. A change of address or password changes them; an egress rotation (which
 * touches neither) does not.
 */
export function renderTemplateFiles(config: StackConfig, target: ClientTarget): TemplateFiles {
  return {
    'client-local.json': renderClientConfig(config, target, 'local'),
    'client-transparent.json': renderClientConfig(config, target, 'transparent'),
    'nat-chain.sh': renderNatChain(config, target.serverIp),
    'client-start-local.sh': renderClientStart(config, 'local'),
    'client-start-transparent.sh': renderClientStart(config, 'transparent'),
  };
}
