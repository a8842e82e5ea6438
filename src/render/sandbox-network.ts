import { PRIVATE_DESTINATIONS } from './server-acl';
import { SANDBOX_BRIDGE, SANDBOX_CHAINS, SANDBOX_HOST_NETNS, SANDBOX_HOST_PATHS } from './sandbox-host-paths';

export interface SandboxNetworkOptions {
  /**
   * Where the sandbox addresses come from. `static`: one configured CIDR (a single host; NAT makes it invisible
   * outside). `delegated`: the IPv4 prefixes AWS delegated to the host's network interface, read from the instance
   * metadata at boot (a fleet host: the VPC routes those addresses to the host, so any gateway reaches any sandbox).
   */
  addresses: { kind: 'static'; cidr: string } | { kind: 'delegated' };
  /** The proxy's ingress address and port, which sandboxes must reach (the template's client dials it). */
  proxy: { ip: string; port: number; protocols: ReadonlyArray<'tcp' | 'udp'> };
  /** The host's own networks (the VPC): sandboxes may not open connections to them. */
  hostNetworks: readonly string[];
  /** Networks allowed to open TCP connections to sandboxes (a fleet's gateways); empty on a single host. */
  routedFrom: readonly string[];
}

/** IPv4 destinations a sandbox never reaches: private space, loopback, link-local (the metadata service), ... */
export function sandboxBlockedDestinations(hostNetworks: readonly string[]): string[] {
  const ipv4 = PRIVATE_DESTINATIONS.filter((c) => !c.includes(':'));
  return [...new Set([...ipv4, ...hostNetworks])];
}

const IMDS = 'http://169.254.169.254/latest';

function cidrSource(addresses: SandboxNetworkOptions['addresses']): string {
  if (addresses.kind === 'static') {
    return `sandbox_cidrs() {
  echo ${addresses.cidr}
}`;
  }
  return `# The /28 prefixes delegated to this host's interface (IMDSv2).
sandbox_cidrs() {
  token=$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' ${IMDS}/api/token)
  mac=$(curl -fsS -H "X-aws-ec2-metadata-token: $token" ${IMDS}/meta-data/mac)
  curl -fsS -H "X-aws-ec2-metadata-token: $token" "${IMDS}/meta-data/network/interfaces/macs/$mac/ipv4-prefix"
}`;
}

/**
 * The sandbox network of a host: a bridge holding the first address of each sandbox CIDR (the sandboxes' default
 * gateway), forwarding, and three chains; the namespace it runs in is named (NETNS) for the runtime. Sandboxes reach the internet through NAT and the proxy's ingress port,
 * and DNS; they reach no private or link-local address (not the VPC, not the metadata service) and nothing on the
 * host itself. A fleet's gateways may open TCP connections to them. `up` rebuilds the chains in one
 * iptables-restore transaction and writes the CIDRs for the platform; `down` removes all of it. Both are idempotent.
 */
export function renderSandboxNetworkScript(options: SandboxNetworkOptions): string {
  const { proxy } = options;
  return `#!/bin/sh
# sandbox-kit sandbox network. Usage: sandbox-network.sh [up|down]   (up is the default; both are safe to run again)
set -eu

BRIDGE=${SANDBOX_BRIDGE}
FWD=${SANDBOX_CHAINS.forward}
IN=${SANDBOX_CHAINS.input}
NAT=${SANDBOX_CHAINS.nat}
# The namespace the script runs in gets this name, so the platform's bridge network can address it.
NETNS=\${SANDBOX_KIT_HOST_NETNS:-${SANDBOX_HOST_NETNS}}
# SANDBOX_KIT_CIDRS_FILE moves the CIDR list, so several hosts can share one file system in a lab.
CIDRS_FILE=\${SANDBOX_KIT_CIDRS_FILE:-${SANDBOX_HOST_PATHS.sandboxCidrs}}
PROXY=${proxy.ip}
PROXY_PORT=${proxy.port}
PROXY_PROTOCOLS="${proxy.protocols.join(' ')}"
BLOCKED="${sandboxBlockedDestinations(options.hostNetworks).join(' ')}"
ROUTED_FROM="${options.routedFrom.join(' ')}"

${cidrSource(options.addresses)}

# 10.88.0.0/22 -> 10.88.0.1/22: the bridge's address in a sandbox CIDR.
first_address() {
  net=\${1%/*}
  echo "\${net%.*}.$((\${net##*.} + 1))/\${1#*/}"
}

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
  echo "-A $FWD -i $BRIDGE -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
  echo "-A $FWD -o $BRIDGE -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
  for protocol in $PROXY_PROTOCOLS; do
    echo "-A $FWD -i $BRIDGE -d $PROXY/32 -p $protocol --dport $PROXY_PORT -j ACCEPT"
  done
  echo "-A $FWD -i $BRIDGE -p udp --dport 53 -j ACCEPT"
  echo "-A $FWD -i $BRIDGE -p tcp --dport 53 -j ACCEPT"
  for cidr in $BLOCKED; do
    echo "-A $FWD -i $BRIDGE -d $cidr -j DROP"
  done
  echo "-A $FWD -i $BRIDGE -j ACCEPT"
  for cidr in $ROUTED_FROM; do
    echo "-A $FWD -o $BRIDGE -s $cidr -p tcp -j ACCEPT"
  done
  echo "-A $FWD -o $BRIDGE -j DROP"
  echo "-A $IN -i $BRIDGE -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
  echo "-A $IN -i $BRIDGE -j DROP"
  echo 'COMMIT'
  echo '*nat'
  echo ":$NAT - [0:0]"
  for cidr in $1; do
    echo "-A $NAT -s $cidr ! -o $BRIDGE -j MASQUERADE"
  done
  echo 'COMMIT'
}

up() {
  cidrs=$(sandbox_cidrs)
  if [ -z "$cidrs" ]; then
    echo "sandbox-network: no sandbox CIDR found" >&2
    exit 1
  fi
  [ -e "/run/netns/$NETNS" ] || ip netns attach "$NETNS" $$
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  for cidr in $cidrs; do
    ip addr replace "$(first_address "$cidr")" dev "$BRIDGE"
  done
  ip link set "$BRIDGE" up
  sysctl -q -w net.ipv4.ip_forward=1
  rules "$cidrs" | iptables-restore -w --noflush
  attach filter FORWARD "$FWD"
  attach filter INPUT "$IN"
  attach nat POSTROUTING "$NAT"
  mkdir -p "$(dirname "$CIDRS_FILE")"
  for cidr in $cidrs; do
    echo "$cidr"
  done > "$CIDRS_FILE.tmp"
  mv "$CIDRS_FILE.tmp" "$CIDRS_FILE"
  echo "sandbox-network: $BRIDGE up for $(tr '\\n' ' ' < "$CIDRS_FILE")"
}

down() {
  detach filter FORWARD "$FWD"
  detach filter INPUT "$IN"
  detach nat POSTROUTING "$NAT"
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
  rm -f "$CIDRS_FILE"
  # Only the name goes: the namespace is the one this script runs in.
  if [ -e "/run/netns/$NETNS" ]; then ip netns delete "$NETNS"; fi
}

case "\${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
`;
}
