#!/usr/bin/env bash
# Pause to disk and resume p50/p95 with 200 MiB written, snapshot and fork latency vs cp -a of the same upper dir,
# same run. Root only; makes one link into the root network namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/persistence.js ] || npm run build
exec node dist/scripts/bench/persistence.js "$@"
