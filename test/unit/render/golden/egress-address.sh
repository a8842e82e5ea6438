#!/bin/sh
# Adds the egress address used by ss-server (-b) to the default-route interface.
set -eu

ADDRESS=10.0.1.20
DEVICE=$(ip -4 route show default | awk '{ print $5; exit }')
if [ -z "$DEVICE" ]; then
  echo "sandbox-kit egress-address: no default route, cannot place $ADDRESS" >&2
  exit 1
fi
ip -4 addr replace "$ADDRESS/32" dev "$DEVICE"
