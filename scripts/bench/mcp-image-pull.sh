#!/usr/bin/env bash
# Create -> answered with a not-yet-pulled image server: pulled after the create answered vs within it, same run (ratio).
# Root only; makes two links into the root network namespace; run it alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/mcp-image-pull.js ] || npm run build
exec node dist/scripts/bench/mcp-image-pull.js "$@"
