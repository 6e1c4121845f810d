#!/usr/bin/env bash
# Regenerates the README's screenshots (screenshots/*.png) from a real Helix: tests/test_turn.py
# runs one whole turn in tmux against the real `larik lsp` and the mock model, and saves the
# screen when the proposed edit's code actions are open in calc.py (review.png), when the
# permission prompt waits in the chat with its choices open (permission.png), and at the end of
# the turn (turn.png). Needs the built binaries, like test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh >/dev/null
LARIK_SCREENSHOTS=1 .cache/venv/bin/python -m pytest -q tests/test_turn.py "$@"
ls -l screenshots/*.png
