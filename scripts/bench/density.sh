#!/usr/bin/env bash
# Density: N idle sandboxes created one after another through the API with the unmodified SDK (default 200): p50
# create by sandbox number, the platform's and the gateway's memory and CPU, host memory per idle sandbox, the agent's
# idle memory. Root only.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/density.js ] || npm run build
exec node dist/scripts/bench/density.js "$@"
