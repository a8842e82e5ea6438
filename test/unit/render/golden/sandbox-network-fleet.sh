#!/bin/sh
# sandbox-kit sandbox network. Usage: sandbox-network.sh [up|down]   (up is the default; both are safe to run again)
set -eu

BRIDGE=sk-br0
FWD=SANDBOX_KIT_FWD
IN=SANDBOX_KIT_IN
NAT=SANDBOX_KIT_NAT
# The namespace the script runs in gets this name, so the platform's bridge network can address it.
NETNS=${SANDBOX_KIT_HOST_NETNS:-sandbox-kit-host}
# SANDBOX_KIT_CIDRS_FILE moves the CIDR list, so several hosts can share one file system in a lab.
CIDRS_FILE=${SANDBOX_KIT_CIDRS_FILE:-/run/sandbox-kit/sandbox-cidrs}
PROXY=203.0.113.10
PROXY_PORT=8388
PROXY_PROTOCOLS="tcp udp"
BLOCKED="0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.168.0.0/16 198.18.0.0/15 224.0.0.0/4 240.0.0.0/4 10.0.0.0/16"
ROUTED_FROM="10.0.0.0/16"

# The /28 prefixes delegated to this host's interface (IMDSv2).
sandbox_cidrs() {
  token=$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' http://169.254.169.254/latest/api/token)
  mac=$(curl -fsS -H "X-aws-ec2-metadata-token: $token" http://169.254.169.254/latest/meta-data/mac)
  curl -fsS -H "X-aws-ec2-metadata-token: $token" "http://169.254.169.254/latest/meta-data/network/interfaces/macs/$mac/ipv4-prefix"
}

# 10.88.0.0/22 -> 10.88.0.1/22: the bridge's address in a sandbox CIDR.
first_address() {
  net=${1%/*}
  echo "${net%.*}.$((${net##*.} + 1))/${1#*/}"
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
  echo "sandbox-network: $BRIDGE up for $(tr '\n' ' ' < "$CIDRS_FILE")"
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

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
