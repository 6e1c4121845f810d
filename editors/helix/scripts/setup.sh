#!/usr/bin/env bash
# Installs what the Helix integration's tests need, and nothing twice. Safe to run again.
#
#   1. Helix 25.01 (Debian trixie's `hx` package, which needs a newer glibc than the system's):
#      downloaded with a private apt configuration under .cache/apt (its own sources, lists and
#      archive cache; the system's apt state is only read, never changed), unpacked with
#      `dpkg -x` into .cache/hx together with trixie's libc, and started through that libc's own
#      loader by the launcher .cache/bin/hx. The mirror is the one the system's apt sources
#      already use, so no host is written here.
#   2. tmux, from the system's apt sources, only when it is missing.
#   3. A Python venv in .cache/venv with pytest (tests/requirements.txt, pinned).
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=$PWD
CACHE=$HERE/.cache
HX_SERIES=25.01
SUITE=trixie

log() { printf 'setup(helix): %s\n' "$*"; }
fail() { printf 'setup(helix): %s\n' "$*" >&2; exit 1; }
mkdir -p "$CACHE"

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# The system's Debian mirror: the first URI of a `deb` source whose suites name the system's own
# release, read from deb822 `.sources` files and one-line `.list` files alike.
system_mirror() {
  local codename files
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  files=$(ls /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$files" ] || return 1
  # shellcheck disable=SC2086
  awk -v want="$codename" '
    function flush() {
      if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " want " ") && uris != "") {
        split(uris, u, " "); print u[1]; found = 1; exit
      }
      types = ""; suites = ""; uris = ""
    }
    FNR == 1 { flush() }
    /^[ \t]*#/ { next }
    FILENAME ~ /\.sources$/ {
      if ($0 ~ /^[ \t]*$/) { flush(); next }
      if (tolower($1) == "types:") { $1 = ""; types = $0 }
      if (tolower($1) == "suites:") { $1 = ""; suites = $0 }
      if (tolower($1) == "uris:") { $1 = ""; uris = $0 }
      next
    }
    $1 == "deb" {
      i = 2
      if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
      if ($(i + 1) == want) { print $i; found = 1; exit }
    }
    END { if (!found) flush() }
  ' $files | sed 's/^[ \t]*//' | head -1
}

# --- 1. Helix ---------------------------------------------------------------------------------
hx_root=$CACHE/hx
launcher=$CACHE/bin/hx
if [ -x "$launcher" ] && "$launcher" --version 2>/dev/null | grep -q "^helix $HX_SERIES"; then
  log "$("$launcher" --version) already unpacked"
else
  command -v apt-get >/dev/null && command -v dpkg >/dev/null || fail "apt-get and dpkg are required"
  mirror=$(system_mirror) || true
  [ -n "${mirror:-}" ] || fail "no Debian mirror found in the system's apt sources"
  arch=$(dpkg --print-architecture)
  apt_dir=$CACHE/apt
  rm -rf "$apt_dir"
  mkdir -p "$apt_dir"/{parts,sources.d,preferences.d,lists/partial,archives/partial,debs}
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE main" > "$apt_dir/sources.list"
  # The configuration is read before the system's apt.conf.d, and points that at an empty folder,
  # so no system hook runs and nothing of the system's state is written. Network settings
  # (proxies, date checks) are carried over from the system's configuration.
  {
    apt-config dump | grep -E '^Acquire::([a-z]+::Proxy|Check-Valid-Until|Check-Date|Retries)' || true
    cat <<CONF
Dir::Etc::Parts "$apt_dir/parts";
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "$apt_dir/sources.d";
Dir::Etc::Preferences "$apt_dir/preferences";
Dir::Etc::PreferencesParts "$apt_dir/preferences.d";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir";
Dir::Cache::Archives "$apt_dir/archives";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
APT::Sandbox::User "$(id -un)";
Acquire::Languages "none";
CONF
  } > "$apt_dir/apt.conf"
  export APT_CONFIG=$apt_dir/apt.conf
  log "fetching the $SUITE package lists (private, under .cache/apt)"
  apt-get -qq update
  version=$(apt-cache show hx 2>/dev/null | sed -n 's/^Version: //p' | head -1)
  case "$version" in
    "$HX_SERIES"*) ;;
    *) fail "$SUITE offers hx '${version:-none}', not $HX_SERIES" ;;
  esac
  log "downloading hx $version with the libc it needs"
  (cd "$apt_dir/debs" && apt-get -qq download "hx=$version" libc6 libgcc-s1)
  unset APT_CONFIG
  rm -rf "$hx_root"
  for deb in "$apt_dir"/debs/*.deb; do dpkg -x "$deb" "$hx_root"; done
  rm -rf "$apt_dir"

  loader=$(find "$hx_root/usr/lib" "$hx_root/lib" -maxdepth 2 -name 'ld-linux*.so.*' 2>/dev/null | head -1 || true)
  [ -n "$loader" ] || fail "no dynamic loader in the unpacked libc6"
  libdir=$(dirname "$(find "$hx_root/usr/lib" -maxdepth 2 -name 'libc.so.6' 2>/dev/null | head -1 || true)")
  mkdir -p "$(dirname "$launcher")"
  # The loader is the process's executable, so Helix cannot find its runtime next to itself:
  # HELIX_RUNTIME says where it is.
  cat > "$launcher" <<LAUNCHER
#!/bin/sh
# Helix $version unpacked from Debian $SUITE, started through its own libc's loader.
HELIX_RUNTIME="\${HELIX_RUNTIME:-$hx_root/usr/lib/hx/runtime}" exec "$loader" --library-path "$libdir" "$hx_root/usr/lib/hx/hx" "\$@"
LAUNCHER
  chmod +x "$launcher"
  "$launcher" --version | grep -q "^helix $HX_SERIES" || fail "the unpacked hx does not start"
  log "$("$launcher" --version) unpacked into .cache/hx"
fi

# --- 2. tmux ------------------------------------------------------------------------------------
if command -v tmux >/dev/null; then
  log "$(tmux -V) present"
else
  log "installing tmux"
  # Another apt run may hold the lock for a while; wait for it rather than fail.
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq tmux >/dev/null
fi

# --- 3. Python venv with pytest -------------------------------------------------------------------
venv=$CACHE/venv
requirements=tests/requirements.txt
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$requirements" "$venv/.requirements" 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$venv/.requirements"
fi
log "pytest $("$venv/bin/python" -c 'import pytest; print(pytest.__version__)') in .cache/venv"
