#!/usr/bin/env bash
# Create -> MCP-ready with a preinstalled image server vs the same server from npm, same template, same run (ratio).
# Root only; makes one link into the root network namespace; run it alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/mcp-image-start.js ] || npm run build
exec node dist/scripts/bench/mcp-image-start.js "$@"
