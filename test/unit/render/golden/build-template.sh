#!/bin/sh
# Builds the sandbox-kit proxy template through this host's platform API. stdin: {"file name": "content", ...}
set -eu

DIR=/etc/sandbox-kit/template
API=http://127.0.0.1:3001
WAIT_SECONDS=900

umask 077
mkdir -p "$DIR"
chmod 0700 "$DIR"
/usr/bin/node -e '
const fs = require("fs");
const dir = process.argv[1];
const files = JSON.parse(fs.readFileSync(0, "utf8"));
for (const [name, content] of Object.entries(files)) {
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(name)) throw new Error("bad template file name " + JSON.stringify(name));
  const mode = name.endsWith(".sh") ? 0o755 : 0o600;
  fs.writeFileSync(dir + "/" + name, content, { mode });
  fs.chmodSync(dir + "/" + name, mode);
}
' "$DIR"

waited=0
until curl -fsS -o /dev/null "$API/health"; do
  if [ "$waited" -ge "$WAIT_SECONDS" ]; then
    echo "build-template: the platform API at $API did not answer within $WAIT_SECONDS s" >&2
    exit 1
  fi
  if [ $((waited % 30)) -eq 0 ]; then echo "build-template: waiting for the platform API at $API ($waited s)"; fi
  sleep 5
  waited=$((waited + 5))
done

E2B_API_URL=$API
E2B_API_KEY=$(cat /etc/sandbox-kit/api-key)
export E2B_API_URL E2B_API_KEY
exec /usr/bin/node /opt/sandbox-kit/lib/sandbox-kit.js template build --client-dir "$DIR" --alias sandbox-kit-proxy --mode local --memory-mb 1024 --cpu-count 1
