#!/bin/sh
# sandbox-kit sandbox network rules. Usage: sandbox-network.sh [up|down]   (up is the default; both are safe to run again)
set -eu

FWD=SANDBOX_KIT_FWD
IN=SANDBOX_KIT_IN
NAT=SANDBOX_KIT_NAT
PROXY=203.0.113.10
PROXY_PORT=8388
PROXY_PROTOCOLS="tcp udp"
BLOCKED="0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.168.0.0/16 198.18.0.0/15 224.0.0.0/4 240.0.0.0/4 10.0.0.0/16"
ROUTED_FROM="10.0.0.0/16"
# DNS passes only to the resolvers sandboxes are given (the host's, as the runtime copies them), never to any address.
RESOLVERS=$(awk '/^nameserver[ \t]+[0-9.]+[ \t]*$/ { print $2 }' /etc/resolv.conf)
HOST_FACTS=${SANDBOX_KIT_HOST_FACTS:-/run/sandbox-kit/host.env}

# The /28 prefixes delegated to this host's interface (IMDSv2).
imds() {
  token=$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' http://169.254.169.254/latest/api/token)
  curl -fsS -H "X-aws-ec2-metadata-token: $token" "http://169.254.169.254/latest/meta-data/$1"
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
  echo "sandbox-network: rules up for sandboxes in $(echo "$cidrs" | tr '\n' ' ')"
  host_facts "$(echo "$cidrs" | head -n 1)"
}

down() {
  detach filter FORWARD "$FWD"
  detach filter INPUT "$IN"
  detach nat POSTROUTING "$NAT"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
