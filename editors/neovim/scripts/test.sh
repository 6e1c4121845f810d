#!/usr/bin/env bash
# Runs the Neovim plugin's tests: the unit specs (busted inside `nvim -l`), then the end-to-end
# tests (pytest driving a child Neovim against the real `larik` binary and the mock model).
# Expects the binaries built (target/debug, or $CARGO_TARGET_DIR, or $LARIK_BIN and
# $LARIK_MOCK_LLM_BIN). Prints a closing "neovim: N passed, N failed" line; exits non-zero on
# any failure. Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh >/dev/null || { echo "neovim: setup failed" >&2; exit 1; }
export PATH="$PWD/.cache/venv/bin:$PATH"

unit_log=.cache/busted.log
nvim --clean --headless -l tests/run_busted.lua tests/unit 2>&1 | tee "$unit_log"
unit_status=${PIPESTATUS[0]}

junit=.cache/pytest-junit.xml
python -m pytest tests/e2e --junitxml="$junit" "$@"
e2e_status=$?

python - "$unit_log" "$junit" "$unit_status" <<'PY'
import re
import sys
import xml.etree.ElementTree as tree

unit_log, junit, unit_status = sys.argv[1], sys.argv[2], int(sys.argv[3])
passed = failed = skipped = 0
match = None
for line in open(unit_log, encoding="utf-8", errors="replace"):
    match = re.match(r"busted: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?", line.strip()) or match
if match:
    passed += int(match.group(1))
    failed += int(match.group(2))
    skipped += int(match.group(3) or 0)
elif unit_status != 0:
    failed += 1  # the specs did not even run
try:
    suite = tree.parse(junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total = int(suite.get("tests"))
    e2e_failed = int(suite.get("failures")) + int(suite.get("errors"))
    e2e_skipped = int(suite.get("skipped"))
    passed += total - e2e_failed - e2e_skipped
    failed += e2e_failed
    skipped += e2e_skipped
except (OSError, tree.ParseError, TypeError, AttributeError):
    failed += 1
print(f"neovim: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY

[ "$unit_status" = 0 ] && [ "$e2e_status" = 0 ]
