/**
 * Puts the egress private address on the interface of the default route, so ss-server can bind its outbound
 * connections to it. On AWS the address is a secondary private IP of the host's network interface with its own
 * Elastic IP; Debian does not configure secondary addresses by itself. Idempotent (`ip addr replace`).
 */
export function renderEgressAddressScript(egressBindAddress: string): string {
  return `#!/bin/sh
# Adds the egress address used by ss-server (-b) to the default-route interface.
set -eu

ADDRESS=${egressBindAddress}
DEVICE=$(ip -4 route show default | awk '{ print $5; exit }')
if [ -z "$DEVICE" ]; then
  echo "sandbox-kit egress-address: no default route, cannot place $ADDRESS" >&2
  exit 1
fi
ip -4 addr replace "$ADDRESS/32" dev "$DEVICE"
`;
}
