#!/usr/bin/env bash
# What egress rules cost: the network step of a create with 200 sandboxes x 20 rules vs none, and TCP throughput
# through a sandbox's policy vs one without, same run. Root only; one link into the root namespace per network.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/network-policy.js ] || npm run build
exec node dist/scripts/bench/network-policy.js "$@"
