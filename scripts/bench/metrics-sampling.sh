#!/usr/bin/env bash
# Metrics sampling benchmark: CPU per sandbox per sample at 50 running sandboxes vs reading two cgroup counters.
# Root only; makes one link into the root network namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/metrics-sampling.js ] || npm run build
exec node dist/scripts/bench/metrics-sampling.js "$@"
