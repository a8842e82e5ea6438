#!/bin/sh
# Builds the sandbox-kit proxy template through this host's platform API.
# stdin: {"serverIp": "...", "password": "...", "stackFile": "..."}
set -eu

DIR=${SANDBOX_KIT_TEMPLATE_DIR:-/etc/sandbox-kit/template}
API=http://127.0.0.1:3001
WAIT_SECONDS=900

umask 077
mkdir -p "$DIR"
chmod 0700 "$DIR"
/usr/bin/node -e '
const fs = require("fs");
const dir = process.argv[1];
const input = JSON.parse(fs.readFileSync(0, "utf8"));
for (const key of ["serverIp", "password", "stackFile"]) {
  if (typeof input[key] !== "string" || input[key] === "") throw new Error("template input: " + key + " missing");
}
fs.writeFileSync(dir + "/password", input.password, { mode: 0o600 });
fs.writeFileSync(dir + "/server-ip", input.serverIp + "\n");
fs.writeFileSync(dir + "/Pulumi.yaml", "name: sandbox-kit\nruntime: nodejs\n");
fs.writeFileSync(dir + "/Pulumi.host.yaml", input.stackFile);
' "$DIR"

waited=0
until curl -fsS -o /dev/null -H "X-API-Key: $(head -n 1 /etc/sandbox-kit/api-key)" "$API/templates"; do
  if [ "$waited" -ge "$WAIT_SECONDS" ]; then
    echo "build-template: the platform API at $API did not answer within $WAIT_SECONDS s" >&2
    exit 1
  fi
  if [ $((waited % 30)) -eq 0 ]; then echo "build-template: waiting for the platform API at $API ($waited s)"; fi
  sleep 5
  waited=$((waited + 5))
done

cd "$DIR"
SANDBOX_KIT_PROXY_PASSWORD=$(cat "$DIR/password")
export SANDBOX_KIT_PROXY_PASSWORD
exec /usr/bin/node /opt/sandbox-kit/dist/bundle/sandbox-kit.js template build --stack host --server-ip "$(cat "$DIR/server-ip")" --api-url "$API" --api-key-file /etc/sandbox-kit/api-key
