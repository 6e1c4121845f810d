#!/usr/bin/env bash
# Runs the Helix integration's end-to-end tests: pytest driving a real Helix 25.01 in tmux against
# the real `larik lsp` binary and the mock model. Expects the binaries built (target/debug, or
# $CARGO_TARGET_DIR, or $LARIK_BIN and $LARIK_MOCK_LLM_BIN). Prints a closing
# "helix: N passed, N failed" line; exits non-zero on any failure. Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh >/dev/null || { echo "helix: setup failed" >&2; exit 1; }

junit=.cache/pytest-junit.xml
rm -f "$junit"
.cache/venv/bin/python -m pytest --junitxml="$junit" "$@"
status=$?

.cache/venv/bin/python - "$junit" <<'PY'
import sys
import xml.etree.ElementTree as tree

passed = failed = skipped = 0
try:
    suite = tree.parse(sys.argv[1]).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total = int(suite.get("tests"))
    failed = int(suite.get("failures")) + int(suite.get("errors"))
    skipped = int(suite.get("skipped"))
    passed = total - failed - skipped
except (OSError, tree.ParseError, TypeError, AttributeError):
    failed = 1  # the tests did not even run
print(f"helix: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY

exit $status
