#!/usr/bin/env bash
# What teams cost a create: POST /v2/sandboxes p50 with the team check, quota reservation and audit vs a one-team
# platform, same run. Root only; makes one link into the root network namespace per platform.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/team-check.js ] || npm run build
exec node dist/scripts/bench/team-check.js "$@"
