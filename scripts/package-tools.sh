#!/usr/bin/env bash
# Installs the wheel's build tools (maturin, and uv to run the wheel as `uvx` does), pinned in
# dist/pypi/tools.txt, into a venv in ~/.cache/larik/package-tools, once, and prints the venv's
# bin directory. Safe to run again: it installs only when the pins changed.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="$HOME/.cache/larik/package-tools"
pins=dist/pypi/tools.txt
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! cmp -s "$pins" "$venv/.pins" 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$pins" >&2
  cp "$pins" "$venv/.pins"
fi
echo "$venv/bin"
