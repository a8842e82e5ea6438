#!/usr/bin/env bash
# Image pull benchmark: cold pullImage of a ~150 MB image from the lab registry vs skopeo copy + umoci unpack; cached.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/image-pull.js ] || npm run build
exec node dist/scripts/bench/image-pull.js "$@"
