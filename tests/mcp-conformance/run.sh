#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against Larik's MCP
# client, one at a time (parallel runs are flaky on 2 cores). Known failures are listed, with the
# reason, in baseline.yml. Needs `npm ci` here (setup.sh does it) and the driver binary built
# (larik-mcp-conformance, from the tests crate). Exits non-zero when any scenario fails that is
# not listed, or a listed one passes.
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
for scenario in $scenarios; do
  log=$(mktemp)
  # The driver gives up within 25 s; the outer timeout only guards against a wedged runner.
  if timeout 120 node_modules/.bin/conformance client --command "$driver" --scenario "$scenario" --timeout 30000 --expected-failures baseline.yml >"$log" 2>&1; then
    passed=$((passed + 1))
    result=ok
  else
    failed=$((failed + 1))
    result=FAILED
    cat "$log"
  fi
  echo "mcp-conformance: $scenario: $result"
  rm -f "$log"
done
echo "mcp-conformance: $passed passed, $failed failed"
((failed == 0))
