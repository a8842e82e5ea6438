#!/usr/bin/env bash
# Agent benchmark: commands.run('true') round trip through the gateway vs spawning locally; 1 GiB of stdout to the
# SDK and 1 GiB /files up/down vs nginx serving the same file; the agent's idle RSS.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run build >/dev/null
exec node dist/scripts/bench/agent-process.js "$@"
