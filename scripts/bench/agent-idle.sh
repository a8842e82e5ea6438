#!/usr/bin/env bash
# The agent's idle memory (its memory cgroup's charge and RSS) against a bare node HTTP server with the same V8 flags,
# in one run.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/agent-idle.js ] || npm run build
exec node dist/scripts/bench/agent-idle.js "$@"
