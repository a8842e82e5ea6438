#!/usr/bin/env bash
# Installs the Debian packages the kit runs and tests with. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(
  shadowsocks-libev   # ss-server, ss-local, ss-redir
  iptables            # NAT chain in transparent mode, lab EIP emulation, the sandbox guard's L3 rules
  nftables            # nft: the sandbox guard's L2 rules (each port bound to its MAC and address, in sets)
  iproute2            # network namespaces and veth pairs for the lab
  conntrack           # the egress relay's original destinations through netlink (kernels without /proc/net/nf_conntrack)
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
  amazon-ecr-credential-helper  # docker-credential-ecr-login: skopeo exchanges AWS keys (fromAWSRegistry) for an ECR token
  docker-registry     # the lab's OCI registry in the image tests and the pull benchmark
  apache2-utils       # htpasswd: the lab registry's password file
  tini                # tini-static: PID 1 of every sandbox, reaps what the agent's children leave
  e2fsprogs           # mkfs.ext4: each sandbox's own disk (a loop-mounted image of its size)
  xfsprogs            # mkfs.xfs: the sandbox host's data volume on AWS, and the disk benchmark's peer
  chromium            # the dashboard's browser test (driven by playwright-core)
  prometheus          # promtool: tests check the platform's and the gateway's /metrics with Prometheus's own parser
  gcc                 # compiles the agent's Node-API addon (scripts/build-native.ts) in npm run build
  libc6-dev           # the C headers and crt files it compiles against
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

# runsc (gVisor), the strong-isolation runtime. Bookworm's own build (2022-12) answers statx with AT_NO_AUTOMOUNT
# (bookworm's ls, stat) with EINVAL and has no systrap platform; its backports carry a 2024-07 build without either
# gap. Backports are pinned low by Debian, so only the package asked for comes from there.
runsc_min='0.0~20240729'
runsc_suite=''
runsc_version=$(dpkg-query -W -f='${Version}' runsc 2>/dev/null || true)
if [ -z "$runsc_version" ] || dpkg --compare-versions "$runsc_version" lt "$runsc_min"; then
  codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
  if [ "$codename" = bookworm ]; then runsc_suite=bookworm-backports; else missing+=(runsc); fi
fi

if [ ${#missing[@]} -eq 0 ] && [ -z "$runsc_suite" ]; then
  echo "setup-host: all $((${#packages[@]} + 1)) Debian packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-host: missing packages (${missing[*]}); run as root or install them with apt-get" >&2
  exit 1
fi
echo "setup-host: installing ${missing[*]} ${runsc_suite:+runsc/$runsc_suite}"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$runsc_suite" ] && ! grep -rqs "$runsc_suite" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # The same mirror as the host's own suite (the format's $(...) are apt's, not the shell's).
  # shellcheck disable=SC2016
  mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' | awk -v s="$codename" '$2 == s { print $1; exit }')
  [ -n "$mirror" ] || { echo "setup-host: no apt source for $codename found to take $runsc_suite from" >&2; exit 1; }
  cat >/etc/apt/sources.list.d/sandbox-kit-backports.sources <<EOF
Types: deb
URIs: $mirror
Suites: $runsc_suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
apt-get update -qq
[ ${#missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ -z "$runsc_suite" ] || apt-get install -y -qq --no-install-recommends -t "$runsc_suite" runsc >/dev/null
echo "setup-host: done"
