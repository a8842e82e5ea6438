#!/usr/bin/env bash
# Gateway benchmark (Stat workload; agent direct vs gateway vs nginx). Needs wrk and nginx (scripts/setup-host.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/gateway.js ] || npm run build
exec node dist/scripts/bench/gateway.js "$@"
