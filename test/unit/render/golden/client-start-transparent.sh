#!/bin/sh
# Starts the sandbox-kit proxy client (transparent mode) and waits until it listens.
set -eu

DIR=${SANDBOX_KIT_DIR:-/etc/sandbox-kit}
RUN=${SANDBOX_KIT_RUN_DIR:-/run/sandbox-kit}
PORTS="12345 1080"
mkdir -p "$RUN"

ss-redir -c "$DIR/client-transparent.json" -f "$RUN/ss-redir.pid"
"$DIR/nat-chain.sh" up
ss-local -c "$DIR/client-local.json" -f "$RUN/ss-local.pid"

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
echo "sandbox-kit: proxy client ready (transparent mode)"
