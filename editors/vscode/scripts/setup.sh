#!/usr/bin/env bash
# Installs what the VS Code extension's build and tests need. Safe to run again: every step is
# skipped when its result is already there.
#
#   1. npm packages from the committed package-lock.json (npm ci, install scripts off: nothing is
#      downloaded beyond the registry's tarballs);
#   2. Debian packages, only the missing ones: chromium (the tests' browser; never downloaded by
#      playwright), ripgrep (stands in for the binary code-server would fetch), and the headers
#      code-server's native modules compile against;
#   3. code-server 4.100.3 (VS Code 1.100's server and workbench, the newest line that runs on
#      Node 20) into .cache/code-server, its native modules rebuilt from source.
#
# Usage: scripts/setup.sh [--no-code-server]
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=$PWD

CODE_SERVER_VERSION=4.100.3
WITH_CODE_SERVER=1
for arg in "$@"; do
  case "$arg" in
    --no-code-server) WITH_CODE_SERVER=0 ;;
    *) echo "setup: unknown argument $arg" >&2; exit 2 ;;
  esac
done

log() { printf 'setup(vscode): %s\n' "$*"; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "setup(vscode): '$1' is required but not installed" >&2; exit 1; }; }
need node
need npm

# --- 1. npm packages --------------------------------------------------------------------------
# npm ci only when the lock file changed since the last install (its hash is kept beside the packages).
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -d node_modules && $(cat node_modules/.lock-hash 2>/dev/null) == "$lock_hash" ]]; then
  log "npm packages up to date"
else
  log "npm ci"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > node_modules/.lock-hash
fi

# --- 2. Debian packages -----------------------------------------------------------------------
missing=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
if [[ $WITH_CODE_SERVER == 1 ]]; then
  command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
  for pkg in libkrb5-dev libxkbfile-dev libx11-dev python3 g++ make pkg-config; do
    have_pkg "$pkg" || missing+=("$pkg")
  done
fi
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then
    echo "setup(vscode): missing Debian packages: ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Only refresh the package lists when apt does not know one of the packages yet.
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

# --- 3. code-server ---------------------------------------------------------------------------
[[ $WITH_CODE_SERVER == 1 ]] || exit 0
CS_ROOT=$HERE/.cache/code-server
CS_PKG=$CS_ROOT/node_modules/code-server
CS_DONE=$CS_ROOT/.installed-$CODE_SERVER_VERSION
if [[ -f $CS_DONE ]]; then
  log "code-server $CODE_SERVER_VERSION already installed"
  exit 0
fi
[[ -f /usr/include/node/node.h ]] || { echo "setup(vscode): Node headers missing in /usr/include/node" >&2; exit 1; }

log "installing code-server $CODE_SERVER_VERSION into .cache/code-server"
start=$SECONDS
rm -rf "$CS_ROOT"
mkdir -p "$CS_ROOT"
cd "$CS_ROOT"
# node-gyp compiles against the installed Node headers instead of downloading them; node-pty's
# build step runs `npx node-gyp`, which must not stop to ask; the root check of code-server's
# install script is satisfied by this variable (npm 11 dropped --unsafe-perm).
export npm_config_nodedir=/usr
export npm_config_yes=true
export npm_config_unsafe_perm=true
export npm_config_fund=false
export npm_config_audit=false
printf '{"name":"code-server-install","private":true}\n' > package.json
# Install scripts are off: code-server's own would download ripgrep, and one failing script makes
# npm roll back everything. The native modules are rebuilt below instead.
npm install --ignore-scripts --no-save --loglevel=error "code-server@$CODE_SERVER_VERSION"
npm rebuild argon2 --loglevel=error
cd "$CS_PKG/lib/vscode"
npm install --omit=dev --ignore-scripts --no-save --loglevel=error
# @vscode/ripgrep's install script skips its download when bin/ exists: use Debian's ripgrep.
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild --loglevel=error
# What code-server's postinstall does after its install.
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --no-save --loglevel=error >/dev/null)
"$CS_PKG/out/node/entry.js" --version >/dev/null 2>&1 || node "$CS_PKG/out/node/entry.js" --version >/dev/null
touch "$CS_DONE"
log "code-server installed in $((SECONDS - start)) s"
