#!/usr/bin/env bash
# Code-interpreter benchmark: runCode('1+1') through the gateway vs the same kernel driven directly in the sandbox;
# create -> first result; the template's size and cold/cached build times. Root only.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f dist/scripts/bench/code-interpreter.js ] || npm run build
exec node dist/scripts/bench/code-interpreter.js "$@"
