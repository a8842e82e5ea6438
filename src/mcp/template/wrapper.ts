/** Where the runtime mounts the kit's payload (node + bundles) in every sandbox. */
export const SANDBOX_KIT_PAYLOAD = '/opt/sandbox-kit';
/** The name of the gateway's bundle under <payload>/bundle (an entry of scripts/bundle.ts). */
export const GATEWAY_BUNDLE = 'mcp-gateway.js';
/** Where the template puts the `mcp-gateway` command, on every user's PATH. */
export const GATEWAY_COMMAND_PATH = '/usr/local/bin/mcp-gateway';

/**
 * The `mcp-gateway` executable of the template: runs the gateway bundle with the payload's node, so the template
 * needs no Node of its own at run time and the gateway is the kit's current one.
 */
export function gatewayWrapperScript(payloadDir = SANDBOX_KIT_PAYLOAD): string {
  return [
    '#!/bin/sh',
    '# mcp-gateway: the sandbox-kit MCP gateway, run by the node the platform mounts read-only into every sandbox.',
    `exec ${payloadDir}/node ${payloadDir}/bundle/${GATEWAY_BUNDLE} "$@"`,
    '',
  ].join('\n');
}
