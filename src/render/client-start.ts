import type { ClientMode, StackConfig } from '../config';
import { SANDBOX_DIR, SANDBOX_RUN_DIR } from './paths';

/**
 * The sandbox's start command for the proxy client. Local mode: ss-local (SOCKS5). Transparent mode: ss-redir, the
 * NAT chain, then ss-local, in that order (docs/design.md#proxy-modes). It returns once every client port listens (the
 * template's readiness check waits for the SOCKS port; transparent mode also waits for the redirect port), or fails
 * after a timeout.
 * SANDBOX_KIT_DIR and SANDBOX_KIT_RUN_DIR move the files, so several sandboxes can share one file system in the lab.
 */
export function renderClientStart(config: StackConfig, mode: ClientMode): string {
  const ports = mode === 'local' ? [config.client.localPort] : [config.client.redirectPort, config.client.localPort];
  const transparent =
    mode === 'transparent'
      ? `ss-redir -c "$DIR/client-transparent.json" -f "$RUN/ss-redir.pid"
"$DIR/nat-chain.sh" up
`
      : '';
  return `#!/bin/sh
# Starts the sandbox-kit proxy client (${mode} mode) and waits until it listens.
set -eu

DIR=\${SANDBOX_KIT_DIR:-${SANDBOX_DIR}}
RUN=\${SANDBOX_KIT_RUN_DIR:-${SANDBOX_RUN_DIR}}
PORTS="${ports.join(' ')}"
mkdir -p "$RUN"

${transparent}ss-local -c "$DIR/client-local.json" -f "$RUN/ss-local.pid"

listening() {
  ss -Hltn "sport = :$1" | grep -q .
}

for port in $PORTS; do
  tries=0
  until listening "$port"; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ]; then
      echo "sandbox-kit: proxy client not listening on port $port after 10s" >&2
      exit 1
    fi
    sleep 0.1
  done
done
echo "sandbox-kit: proxy client ready (${mode} mode)"
`;
}
