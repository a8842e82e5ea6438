#!/usr/bin/env bash
# Volume read/write throughput in a sandbox through its volume mount vs the same directory on the host, same run.
# Root only; makes one link into the root network namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/volumes.js ] || npm run build
exec node dist/scripts/bench/volumes.js "$@"
