#!/usr/bin/env bash
# Sandbox start benchmark: create -> first agent call, p50/p95 with 1, 10, 50 running, vs a bare `crun run` floor;
# idle memory per sandbox. Root only; makes one link into the root network namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/sandbox-start.js ] || npm run build
exec node dist/scripts/bench/sandbox-start.js "$@"
