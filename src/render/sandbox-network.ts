import { sandboxBlockedDestinations } from '../runtime/network/private-ranges';
import { SANDBOX_CHAINS, SANDBOX_HOST_PATHS } from './sandbox-host-paths';

/**
 * The runtime's standalone sandbox network, as the platform makes it on a host: a namespace `<instance>.host` whose
 * bridge `sb` holds the subnet's first address (the sandboxes' gateway), plugged into the host's namespace, which
 * holds its last; with `--route-out` the platform routes that namespace out through the host
 * (src/runtime/network/host-network.ts). This script makes the host's side: forwarding, filter and NAT.
 */
export const STANDALONE_BRIDGE = 'sb';

export interface SandboxNetworkOptions {
  /**
   * The sandboxes' source addresses. `static`: a fixed CIDR (a single host: the platform's standalone sandbox
   * networks live in it). `delegated`: the IPv4 prefixes AWS delegated to the host's network interface, read from the
   * instance metadata at boot (a fleet host: the VPC routes those addresses to the host).
   */
  addresses: { kind: 'static'; cidr: string } | { kind: 'delegated' };
  /** The proxy's ingress address and port, which sandboxes must reach (the template's client dials it). */
  proxy: { ip: string; port: number; protocols: ReadonlyArray<'tcp' | 'udp'> };
  /** The host's own networks (the VPC): sandboxes may not open connections to them. */
  hostNetworks: readonly string[];
  /** Networks allowed to open TCP connections to sandboxes (a fleet's gateways); empty on a single host. */
  routedFrom: readonly string[];
}

const IMDS = 'http://169.254.169.254/latest';

function cidrSource(addresses: SandboxNetworkOptions['addresses']): string {
  if (addresses.kind === 'static') {
    return `sandbox_cidrs() {
  echo ${addresses.cidr}
}`;
  }
  return `# The /28 prefixes delegated to this host's interface (IMDSv2).
imds() {
  token=$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' ${IMDS}/api/token)
  curl -fsS -H "X-aws-ec2-metadata-token: $token" "${IMDS}/meta-data/$1"
}
sandbox_cidrs() {
  imds "network/interfaces/macs/$(imds mac)/ipv4-prefix"
}
# What the platform unit's command line needs: this host's ID and address, and the prefix its sandboxes use (the
# first one delegated).
host_facts() {
  mkdir -p "$(dirname "$HOST_FACTS")"
  {
    echo "HOST_ID=$(imds instance-id)"
    echo "HOST_ADDRESS=$(imds local-ipv4)"
    echo "SANDBOX_SUBNET=$1"
  } > "$HOST_FACTS.tmp"
  mv "$HOST_FACTS.tmp" "$HOST_FACTS"
}`;
}

/**
 * The sandbox network's rules on a host, keyed on the sandboxes' source addresses (the platform makes the bridges and
 * namespaces; this makes their traffic go, and go only where it may): forwarding on, and three chains. Sandboxes
 * reach the internet through NAT, the proxy's ingress port, and DNS of the host's resolvers; they reach no private or link-local address (not
 * the VPC, not the metadata service) and no service of the host itself. A fleet's gateways may open TCP connections
 * to them. `up` rebuilds the chains in one iptables-restore transaction; `down` removes them. Both are idempotent.
 */
export function renderSandboxNetworkScript(options: SandboxNetworkOptions): string {
  const { proxy } = options;
  return `#!/bin/sh
# sandbox-kit sandbox network rules. Usage: sandbox-network.sh [up|down]   (up is the default; both are safe to run again)
set -eu

FWD=${SANDBOX_CHAINS.forward}
IN=${SANDBOX_CHAINS.input}
NAT=${SANDBOX_CHAINS.nat}
PROXY=${proxy.ip}
PROXY_PORT=${proxy.port}
PROXY_PROTOCOLS="${proxy.protocols.join(' ')}"
BLOCKED="${sandboxBlockedDestinations(options.hostNetworks).join(' ')}"
ROUTED_FROM="${options.routedFrom.join(' ')}"
# DNS passes only to the resolvers sandboxes are given (the host's, as the runtime copies them), never to any address.
RESOLVERS=$(awk '/^nameserver[ \\t]+[0-9.]+[ \\t]*$/ { print $2 }' /etc/resolv.conf)
${
  options.addresses.kind === 'delegated'
    ? `HOST_FACTS=\${SANDBOX_KIT_HOST_FACTS:-${SANDBOX_HOST_PATHS.hostFacts}}
`
    : ''
}
${cidrSource(options.addresses)}

attach() {
  iptables -w -t "$1" -C "$2" -j "$3" 2>/dev/null || iptables -w -t "$1" -I "$2" 1 -j "$3"
}

detach() {
  while iptables -w -t "$1" -D "$2" -j "$3" 2>/dev/null; do :; done
  if iptables -w -t "$1" -L "$3" -n >/dev/null 2>&1; then
    iptables -w -t "$1" -F "$3"
    iptables -w -t "$1" -X "$3"
  fi
}

rules() {
  echo '*filter'
  echo ":$FWD - [0:0]"
  echo ":$IN - [0:0]"
  for cidr in $1; do
    echo "-A $FWD -s $cidr -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
    echo "-A $FWD -d $cidr -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
    for protocol in $PROXY_PROTOCOLS; do
      echo "-A $FWD -s $cidr -d $PROXY/32 -p $protocol --dport $PROXY_PORT -j ACCEPT"
    done
    for resolver in $RESOLVERS; do
      echo "-A $FWD -s $cidr -d $resolver/32 -p udp --dport 53 -j ACCEPT"
      echo "-A $FWD -s $cidr -d $resolver/32 -p tcp --dport 53 -j ACCEPT"
    done
    for blocked in $BLOCKED; do
      echo "-A $FWD -s $cidr -d $blocked -j DROP"
    done
    echo "-A $FWD -s $cidr -j ACCEPT"
    for from in $ROUTED_FROM; do
      echo "-A $FWD -s $from -d $cidr -p tcp -j ACCEPT"
    done
    echo "-A $FWD -d $cidr -j DROP"
    echo "-A $IN -s $cidr -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
    echo "-A $IN -s $cidr -j DROP"
  done
  echo 'COMMIT'
  echo '*nat'
  echo ":$NAT - [0:0]"
  for cidr in $1; do
    echo "-A $NAT -s $cidr ! -d $cidr -j MASQUERADE"
  done
  echo 'COMMIT'
}

up() {
  cidrs=$(sandbox_cidrs)
  if [ -z "$cidrs" ]; then
    echo "sandbox-network: no sandbox CIDR found" >&2
    exit 1
  fi
  sysctl -q -w net.ipv4.ip_forward=1
  rules "$cidrs" | iptables-restore -w --noflush
  attach filter FORWARD "$FWD"
  attach filter INPUT "$IN"
  attach nat POSTROUTING "$NAT"
  echo "sandbox-network: rules up for sandboxes in $(echo "$cidrs" | tr '\\n' ' ')"${
    options.addresses.kind === 'delegated'
      ? `
  host_facts "$(echo "$cidrs" | head -n 1)"`
      : ''
  }
}

down() {
  detach filter FORWARD "$FWD"
  detach filter INPUT "$IN"
  detach nat POSTROUTING "$NAT"
}

case "\${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
`;
}
