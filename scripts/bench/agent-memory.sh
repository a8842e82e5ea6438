#!/usr/bin/env bash
# Agent memory under hostile input: oversized and endless bodies, 32 slow ListDirs, slow downloads; peak RSS of the
# agent as the runtime starts it against the same bundle with no V8 flags, in one run.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/agent-memory.js ] || npm run build
exec node dist/scripts/bench/agent-memory.js "$@"
