#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against Larik's MCP
# client, one at a time (parallel runs are flaky on 2 cores). Known failures are listed, with the
# reason, in baseline.yml. Needs `npm ci` here (setup.sh does it) and the driver binary built
# (larik-mcp-conformance, from the tests crate). Exits non-zero when any scenario fails that is
# not listed, or a listed one passes. Then the product's own login paths (cli-login.sh,
# acp-login.mjs) run as the client of two auth scenarios.
set -euo pipefail
cd "$(dirname "$0")"
target="${CARGO_TARGET_DIR:-../../target}"
driver="${LARIK_MCP_CONFORMANCE_BIN:-$target/debug/larik-mcp-conformance}"
[[ -x "$driver" ]] || { echo "mcp-conformance: $driver is missing: build the workspace's binaries first" >&2; exit 1; }
driver="$(cd "$(dirname "$driver")" && pwd)/$(basename "$driver")"
# The suite needs Node 22; it comes from npm as the `node` package.
export PATH="$PWD/node_modules/node/bin:$PATH"
# Every client scenario but the extensions' (client-credentials grants, cross-app access): the
# 2025-11-25 set, the 2025-06-18 and 2025-03-26 back-compat ones and the draft ones.
scenarios=$(node_modules/.bin/conformance list --client | grep -v '\[extension\]' | sed -n 's/^  - \([^ ]*\).*/\1/p')
passed=0 failed=0
# run NAME COMMAND SCENARIO TIMEOUT_MS [suite options]: one scenario, its log shown on failure.
run() {
  local name=$1 command=$2 scenario=$3 limit=$4 log result
  shift 4
  log=$(mktemp)
  # The client gives up first; the outer timeout only guards against a wedged runner.
  if timeout 180 node_modules/.bin/conformance client --command "$command" --scenario "$scenario" --timeout "$limit" "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    result=ok
  else
    failed=$((failed + 1))
    result=FAILED
    cat "$log"
  fi
  echo "mcp-conformance: $name: $result"
  rm -f "$log"
}
for scenario in $scenarios; do
  run "$scenario" "$driver" "$scenario" 30000 --expected-failures baseline.yml
done
# The product's own login paths against the suite's OAuth servers: `larik mcp login` in a
# terminal, and `/mcp login` then a step-up in the middle of a tool call through an editor (the
# official ACP SDK as the client, the mock model calling the tool).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(cd ../.. && pwd)/target}"
run "larik mcp login (auth/metadata-default)" "bash $PWD/cli-login.sh" auth/metadata-default 90000
run "/mcp login and step-up over ACP (auth/scope-step-up)" "node $PWD/acp-login.mjs" auth/scope-step-up 90000
echo "mcp-conformance: $passed passed, $failed failed"
((failed == 0))
