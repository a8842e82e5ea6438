import type { StackConfig } from '../config';
import { NAT_CHAIN } from './paths';

/** Destinations never redirected besides the proxy itself (docs/design.md#proxy-modes), before any extra bypass CIDRs from config. */
export const ALWAYS_BYPASSED = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16'] as const;

/**
 * The transparent-mode NAT chain: every outgoing TCP connection goes to ss-redir, except to the proxy itself and the
 * bypassed ranges, and except the agent's own answers: loading the chain makes the kernel track connections that were
 * already open (the platform's stream that runs the start command is one), and their next packet would otherwise be
 * taken for a new outgoing connection and redirected. `up` rebuilds the chain atomically, so running it again leaves one chain and one OUTPUT jump;
 * `down` removes both.
 */
export function renderNatChain(config: StackConfig, serverIp: string): string {
  const bypass = [`${serverIp}/32`, ...ALWAYS_BYPASSED, ...config.client.bypassCidrs];
  return `#!/bin/sh
# Transparent proxy: redirect outgoing TCP to ss-redir on port ${config.client.redirectPort}.
# Usage: nat-chain.sh [up|down]   (up is the default; both are safe to run again)
set -eu

CHAIN=${NAT_CHAIN}
REDIRECT_PORT=${config.client.redirectPort}
AGENT_PORT=${config.agent.port}
BYPASS="${bypass.join(' ')}"

up() {
  # One iptables-restore transaction creates or empties the chain and refills it: a re-run never duplicates a rule
  # and never leaves a moment in which the attached chain is empty and connections bypass the proxy.
  {
    echo '*nat'
    echo ":$CHAIN - [0:0]"
    echo "-A $CHAIN -p tcp --sport $AGENT_PORT -j RETURN"
    for cidr in $BYPASS; do
      echo "-A $CHAIN -d $cidr -j RETURN"
    done
    echo "-A $CHAIN -p tcp -j REDIRECT --to-ports $REDIRECT_PORT"
    echo 'COMMIT'
  } | iptables-restore -w --noflush
  iptables -w -t nat -C OUTPUT -p tcp -j "$CHAIN" 2>/dev/null || iptables -w -t nat -A OUTPUT -p tcp -j "$CHAIN"
}

down() {
  while iptables -w -t nat -D OUTPUT -p tcp -j "$CHAIN" 2>/dev/null; do :; done
  if iptables -w -t nat -L "$CHAIN" -n >/dev/null 2>&1; then
    iptables -w -t nat -F "$CHAIN"
    iptables -w -t nat -X "$CHAIN"
  fi
}

case "\${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
`;
}
