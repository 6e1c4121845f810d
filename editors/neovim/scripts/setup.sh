#!/usr/bin/env bash
# Installs what the Neovim plugin's tests need, and nothing twice: a Python venv under
# editors/neovim/.cache/venv with a pinned Neovim 0.11 binary, pynvim and pytest
# (tests/requirements.txt), Debian's lua-busted for the unit specs, and tmux for the screen
# tests. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.cache/venv
requirements=tests/requirements.txt
stamp=$venv/.requirements

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$requirements" "$stamp" 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
fi
"$venv/bin/nvim" --version | head -1

if ! dpkg -s lua-busted >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  # Another apt run may hold the lock for a while; wait for it rather than fail.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq lua-busted >/dev/null
fi
echo "lua-busted $(dpkg-query -W -f='${Version}' lua-busted)"

# tmux: the screen tests run Neovim in a terminal and read its screen back.
if ! command -v tmux >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq tmux >/dev/null
fi
echo "$(tmux -V)"
