#!/usr/bin/env bash
# Builds, packages and tests the VS Code extension. Exits non-zero on any failure.
#
#   1. setup (idempotent, see setup.sh), type check, then the packages as a release makes them:
#      dist/ and out/ removed, `vsce package` (its `vscode:prepublish` builds the bundles and the
#      tests) gives dist/larik.vsix, and `npm run package:platform` a linux-x64 one carrying the
#      real agent as bin/larik (the unit tests check both packages' contents);
#   2. unit tests: Node's test runner with a stub of the vscode module, including the client side
#      against the real `larik acp` and the mock model;
#   3. webview tests: the chat bundle in Debian's Chromium through playwright-core;
#   4. end to end: dist/larik.vsix installed in code-server (a real VS Code workbench and extension host) driven
#      by playwright-core against the real agent and the mock model; and the platform package, whose
#      own agent runs with no setting and no larik on PATH.
#
# The agent's binaries must be built (cargo build): they are taken from LARIK_BIN and
# LARIK_MOCK_LLM_BIN, else $CARGO_TARGET_DIR/debug, else <repo>/target/debug.
#
# Usage: scripts/test.sh [unit] [webview] [e2e]     (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

suites=("$@")
((${#suites[@]})) || suites=(unit webview e2e)
want() { [[ " ${suites[*]} " == *" $1 "* ]]; }

phase() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== vscode: $name"
  "$@" || rc=$?
  if ((rc == 0)); then echo "== vscode: $name: ok in $((SECONDS - start)) s"; else echo "== vscode: $name: FAILED ($rc) in $((SECONDS - start)) s"; fi
  return "$rc"
}

if want e2e; then phase setup bash scripts/setup.sh; else phase setup bash scripts/setup.sh --no-code-server; fi
phase typecheck npx tsc -p . --noEmit
clean_package() {
  rm -rf dist out
  npx vsce package --out dist/larik.vsix
}
phase package clean_package
# The platform package carries the agent the tests run (as test/support/agent.ts finds it).
larik_bin=${LARIK_BIN:-}
if [[ -z $larik_bin ]]; then
  target_dir=${CARGO_TARGET_DIR:-target}
  [[ $target_dir == /* ]] || target_dir=../../$target_dir
  larik_bin=$target_dir/debug/larik
fi
[[ -x $larik_bin ]] || { echo "== vscode: $larik_bin is missing: build it (cargo build) or set LARIK_BIN" >&2; exit 1; }
echo "== vscode: packing $larik_bin ($(($(stat -c %s "$larik_bin") / 1048576)) MiB)"
phase "platform package" node scripts/package-platform.mjs "$larik_bin" linux-x64

failed=()
run_suite() {
  local name=$1
  shift
  phase "$name tests" "$@" || failed+=("$name")
}
want unit && run_suite unit node --require ./test/unit/register-vscode-stub.cjs --test --test-reporter=spec out/test/unit/
want webview && run_suite webview node --test --test-reporter=spec out/test/webview/
want e2e && run_suite e2e node --test --test-concurrency=1 --test-reporter=spec out/test/e2e/

if ((${#failed[@]})); then
  echo "== vscode: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "== vscode: all passed (${suites[*]})"
