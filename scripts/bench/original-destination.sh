#!/usr/bin/env bash
# What the egress relay pays to find a redirected connection's original destination: /proc/net/nf_conntrack vs the
# conntrack tool (netlink), per connection, at several table sizes, same run. Root only; one network namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/original-destination.js ] || npm run build
exec node dist/scripts/bench/original-destination.js "$@"
