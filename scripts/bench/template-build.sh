#!/usr/bin/env bash
# Template build benchmark: the proxy template cold and cached through the SDK and the platform, vs mmdebstrap + chroot.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/template-build.js ] || npm run build
exec node dist/scripts/bench/template-build.js "$@"
