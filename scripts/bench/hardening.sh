#!/usr/bin/env bash
# Hardening cost: create -> first agent call and commands.run('true'), user namespace + seccomp + disk on vs off (and
# on without the disk), per runtime (crun, runc, runsc: --runtimes), with ListDir, in one run, and where the time goes;
# --steps N: build steps with a disk of their own vs none, likewise. Root only; makes one
# link into the root network namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/hardening.js ] || npm run build
exec node dist/scripts/bench/hardening.js "$@"
