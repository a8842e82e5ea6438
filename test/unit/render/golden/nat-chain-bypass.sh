#!/bin/sh
# Transparent proxy: redirect outgoing TCP to ss-redir on port 12346.
# Usage: nat-chain.sh [up|down]   (up is the default; both are safe to run again)
set -eu

CHAIN=SANDBOX_KIT
REDIRECT_PORT=12346
AGENT_PORT=49983
BYPASS="203.0.113.10/32 0.0.0.0/8 127.0.0.0/8 169.254.0.0/16 192.0.2.0/24 198.51.100.7/32"

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

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
