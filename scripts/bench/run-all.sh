#!/usr/bin/env bash
# Runs every benchmark in turn. Each one measures against a peer in the same run and prints ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "== agent: ListDir 100,000 entries vs find -printf; Stat latency =="
bash scripts/bench/agent-listdir.sh "$@"
echo
echo "== agent: commands.run round trip, 1 GiB stdout and /files vs nginx, idle RSS =="
bash scripts/bench/agent-process.sh
echo
echo "== agent: peak memory under hostile input (oversized, endless, slow ListDirs, slow downloads) vs the same bundle without V8 flags =="
bash scripts/bench/agent-memory.sh
bash scripts/bench/agent-idle.sh
echo
echo "== gateway: Stat straight to the agent vs through the gateway vs through nginx =="
bash scripts/bench/gateway.sh "$@"
echo
echo "== templates: proxy template cold and cached through the SDK vs mmdebstrap + chroot =="
bash scripts/bench/template-build.sh "$@"
echo
echo "== templates: cold image pull + unpack from the lab registry vs skopeo copy + umoci unpack; cached =="
bash scripts/bench/image-pull.sh
echo
echo "== mcp: tool call through the in-sandbox gateway vs stdio vs the server's own HTTP; catalog validation =="
node dist/scripts/bench/mcp.js
echo
echo "== mcp: create -> MCP-ready with a preinstalled image server vs the same server from npm =="
bash scripts/bench/mcp-image-start.sh
echo
echo "== sandboxes: create -> first agent call through the runtime and the API vs bare crun run; idle memory =="
bash scripts/bench/sandbox-start.sh
echo
echo "== sandboxes: 200 idle created one after another through the SDK: p50 create flat?, platform and gateway memory and CPU, memory per idle sandbox =="
bash scripts/bench/density.sh
echo
echo "== code interpreter: runCode('1+1') through the gateway vs the kernel driven directly; create -> first result; template size and build times =="
bash scripts/bench/code-interpreter.sh
echo
echo "== teams: create p50 with the team check, quota reservation and audit vs a one-team platform =="
bash scripts/bench/team-check.sh
echo
echo "== metrics: CPU per sandbox per metrics sample at 50 running sandboxes vs reading two cgroup counters =="
bash scripts/bench/metrics-sampling.sh
echo
echo "== sandboxes: what the hardening (user namespace, seccomp) costs at create and per command =="
bash scripts/bench/hardening.sh
echo
echo "== volumes: read/write throughput in a sandbox through its volume vs the same directory on the host =="
bash scripts/bench/volumes.sh
