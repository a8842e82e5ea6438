#!/usr/bin/env bash
# Installs the Debian packages the kit runs and tests with. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(
  shadowsocks-libev   # ss-server, ss-local, ss-redir
  iptables            # NAT chain in transparent mode, lab EIP emulation, the sandbox guard (iptables, ebtables-nft)
  iproute2            # network namespaces and veth pairs for the lab
  shellcheck          # lints every rendered shell artifact
  systemd             # systemd-analyze verify for the rendered unit
  openssh-server      # sshd on the lab proxy host, for `sandbox-kit verify`
  redis-server        # shared gateway catalog
  nginx-light         # peer in the gateway benchmark
  attr                # setfattr/getfattr for agent metadata
  wrk                 # load generator for benchmarks
  crun                # the sandbox runtime (OCI)
  runc                # the drop-in runtime, and the one that handles hybrid cgroups natively
  mmdebstrap          # base root filesystems for templates, from the Debian mirror
  skopeo              # pulls template base images from OCI registries (the distribution API, digest checks)
  umoci               # unpacks image layers with the sandboxes' id mapping; builds the test images
  docker-registry     # the lab's OCI registry in the image tests and the pull benchmark
  apache2-utils       # htpasswd: the lab registry's password file
  tini                # tini-static: PID 1 of every sandbox, reaps what the agent's children leave
  chromium            # the dashboard's browser test (driven by playwright-core)
  prometheus          # promtool: tests check the platform's and the gateway's /metrics with Prometheus's own parser
  curl
  netcat-openbsd
  procps
  psmisc
  socat
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-host: all ${#packages[@]} Debian packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-host: missing packages (${missing[*]}); run as root or install them with apt-get" >&2
  exit 1
fi
echo "setup-host: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-host: done"
