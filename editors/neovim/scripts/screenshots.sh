#!/usr/bin/env bash
# Regenerates the README's screenshots (screenshots/*.png) from real terminal screens: the
# screen tests run Neovim in tmux against the real agent and the mock model, and save what it
# shows at the moments the README pictures: test_turn.py the review of an edit (review.png), the
# permission prompt (permission.png) and the end of the turn (turn.png); test_subagents.py two
# subagents under their task calls (subagents.png). Needs the built binaries, like test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh >/dev/null
export PATH="$PWD/.cache/venv/bin:$PATH"
LARIK_SCREENSHOTS=1 python -m pytest -q tests/e2e/test_turn.py tests/e2e/test_subagents.py "$@"
ls -l screenshots/*.png
