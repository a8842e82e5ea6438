#!/usr/bin/env bash
# Agent benchmark: ListDir of 100,000 entries vs GNU find -printf, and Stat p50/p99 at 1 and 32 clients.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/agent-listdir.js ] || npm run build
exec node dist/scripts/bench/agent-listdir.js "$@"
