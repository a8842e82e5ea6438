#!/usr/bin/env bash
# Builds the base root file system of the built-in `base` template into the cache (mmdebstrap, ~110 s once), so
# tests and the platform reuse it. Safe to run again: a cached one is reused. Args: debian:<tag>... (default bookworm)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/src/cli/main.js ] || npm run build
exec node dist/src/cli/main.js rootfs "$@"
