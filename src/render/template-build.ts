import type { StackConfig } from '../config';
import { renderClientConfig, type ClientTarget } from './client-config';
import { renderClientStart } from './client-start';
import { renderNatChain } from './nat-chain';
import { SANDBOX_HOST_PATHS as P } from './sandbox-host-paths';

/** The health path of the platform API: the build waits for it before it starts. */
export const PLATFORM_HEALTH_PATH = '/health';
/** How long the build waits for the platform API (cloud-init installs packages and the bundle first). */
export const PLATFORM_WAIT_SECONDS = 900;

/** The proxy client files the template carries, by name (the client configs hold the password). */
export type TemplateFiles = Record<string, string>;

/**
 * Builds the proxy template on this host through its own platform API, with the same `sandbox-kit template build`
 * anyone runs against any E2B-compatible API. The client files arrive on stdin as one JSON object
 * ({name: content}), so the password never appears in a command line; they are written 0600 under a 0700 directory.
 * The API key is read from its 0600 file into the environment (E2B_API_KEY), never into argv.
 */
export function renderBuildTemplateScript(config: StackConfig): string {
  const t = config.template;
  return `#!/bin/sh
# Builds the sandbox-kit proxy template through this host's platform API. stdin: {"file name": "content", ...}
set -eu

DIR=${P.templateDir}
API=http://127.0.0.1:${config.sandboxHost.apiPort}
WAIT_SECONDS=${PLATFORM_WAIT_SECONDS}

umask 077
mkdir -p "$DIR"
chmod 0700 "$DIR"
${P.node} -e '
const fs = require("fs");
const dir = process.argv[1];
const files = JSON.parse(fs.readFileSync(0, "utf8"));
for (const [name, content] of Object.entries(files)) {
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(name)) throw new Error("bad template file name " + JSON.stringify(name));
  const mode = name.endsWith(".sh") ? 0o755 : 0o600;
  fs.writeFileSync(dir + "/" + name, content, { mode });
  fs.chmodSync(dir + "/" + name, mode);
}
' "$DIR"

waited=0
until curl -fsS -o /dev/null "$API${PLATFORM_HEALTH_PATH}"; do
  if [ "$waited" -ge "$WAIT_SECONDS" ]; then
    echo "build-template: the platform API at $API did not answer within $WAIT_SECONDS s" >&2
    exit 1
  fi
  if [ $((waited % 30)) -eq 0 ]; then echo "build-template: waiting for the platform API at $API ($waited s)"; fi
  sleep 5
  waited=$((waited + 5))
done

E2B_API_URL=$API
E2B_API_KEY=$(cat ${P.apiKey})
export E2B_API_URL E2B_API_KEY
exec ${P.node} ${P.cli} template build --client-dir "$DIR" --alias ${t.alias} --mode ${t.mode} --memory-mb ${t.memoryMB} --cpu-count ${t.cpuCount}
`;
}

/** The file names the proxy template carries (what the template definition copies in). */
export const TEMPLATE_FILE_NAMES = ['client-local.json', 'client-transparent.json', 'nat-chain.sh', 'client-start-local.sh', 'client-start-transparent.sh'] as const;

/**
 * The proxy client files of the template, rendered for the proxy's ingress address and password: what the template
 * build gets on stdin. Their content is the whole client config, so a change of address or password changes them,
 * and an egress rotation (which touches neither) does not.
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
