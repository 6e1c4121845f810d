#!/usr/bin/env bash
# The dev container Feature's installer: puts the prebuilt `larik` in PREFIX/bin (default
# /usr/local/bin), from npm or from the release archive, then checks it runs and says whether the
# sandbox can work in this container. A Feature runs it as root while the image is built, with its
# options as upper-cased environment variables:
#
#   VERSION   `latest` or a release (`0.1.0`)
#   METHOD    `npm`, `archive`, or `auto` (npm where `npm` is on PATH, else the archive)
#
# Two more variables are for tests and offline builds, never set by a Feature:
#
#   LARIK_FEATURE_PACKAGES  a directory holding the packages to install instead of fetching them:
#                           the npm tarballs `larik-<platform>-<arch>-<version>.tgz` and
#                           `larik-<version>.tgz`, or `larik-<version>-<target>.tar.gz` with its
#                           `.sha256` (what scripts/npm.sh and scripts/dist.sh write)
#   LARIK_FEATURE_PREFIX    where to install (default /usr/local)
set -euo pipefail

version="${VERSION:-latest}"
method="${METHOD:-auto}"
packages="${LARIK_FEATURE_PACKAGES:-}"
prefix="${LARIK_FEATURE_PREFIX:-/usr/local}"
# The repository's address is not settled yet; dist/README.md lists every OWNER to replace.
release_base="https://github.com/OWNER/larik/releases"

say() { echo "larik feature: $*"; }
die() { echo "larik feature: error: $*" >&2; exit 1; }

case "$version" in
  latest | [0-9]*.[0-9]*.[0-9]*) version="${version#v}" ;;
  v[0-9]*.[0-9]*.[0-9]*) version="${version#v}" ;;
  *) die "version '$version' is neither 'latest' nor a release such as 0.1.0" ;;
esac
case "$method" in
  auto | "") if command -v npm > /dev/null 2>&1; then method=npm; else method=archive; fi ;;
  npm | archive) ;;
  *) die "method '$method' is not one of npm, archive, auto" ;;
esac
if [ -n "$packages" ]; then
  [ -d "$packages" ] || die "LARIK_FEATURE_PACKAGES=$packages is not a directory"
  packages="$(cd "$packages" && pwd)"
fi
mkdir -p "$prefix/bin"
prefix="$(cd "$prefix" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The one file in the packages directory matching a pattern, or a clear error naming what is missing.
local_package() {
  local pattern="$1" what="$2" found=() file
  # A pattern without wildcards (a named version) expands to itself, so each file is checked.
  for file in "$packages"/$pattern; do
    [ -f "$file" ] && found+=("$file")
  done
  [ "${#found[@]}" -gt 0 ] || die "no $what in $packages (looked for $pattern)"
  [ "${#found[@]}" -eq 1 ] || die "more than one $what in $packages: ${found[*]##*/}; name the version"
  echo "${found[0]}"
}

# Downloads a URL to a file with curl or wget, whichever the image has.
download() {
  if command -v curl > /dev/null 2>&1; then
    curl -fsSL --retry 3 -o "$2" "$1" || die "cannot download $1"
  elif command -v wget > /dev/null 2>&1; then
    wget -q -O "$2" "$1" || die "cannot download $1"
  else
    die "neither curl nor wget is installed: add one to the image first, or use method npm"
  fi
}

# The Rust target of this machine, as the release archives are named.
rust_target() {
  local arch
  case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) die "no release archive for $(uname -m)" ;;
  esac
  case "$(uname -s)" in
    Linux)
      if ls /lib/ld-musl-* > /dev/null 2>&1; then
        die "no release archive for musl (Alpine); use a glibc-based image"
      fi
      echo "$arch-unknown-linux-gnu"
      ;;
    Darwin) echo "$arch-apple-darwin" ;;
    *) die "no release archive for $(uname -s)" ;;
  esac
}

install_with_npm() {
  command -v npm > /dev/null 2>&1 || die "method npm, but npm is not installed: install Node.js first (its Feature before this one) or use method archive"
  local spec=("larik@$version") offline=()
  if [ -n "$packages" ]; then
    local pattern_version="$version"
    [ "$version" = latest ] && pattern_version="[0-9]*"
    # The platform package first, as scripts/npm.sh prints them; the launcher requires it.
    local platform
    platform="$(node -p 'process.platform + "-" + process.arch')" || die "node does not run"
    local platform_package launcher
    platform_package="$(local_package "larik-$platform-$pattern_version.tgz" "npm package larik-$platform")" || exit 1
    launcher="$(local_package "larik-$pattern_version.tgz" "npm package larik")" || exit 1
    spec=("$platform_package" "$launcher")
    offline=(--offline)
  fi
  say "npm install -g ${spec[*]##*/} (prefix $prefix)"
  npm_config_cache="$work/npm-cache" npm_config_update_notifier=false npm_config_fund=false \
    npm_config_audit=false npm_config_loglevel=error \
    npm install --global "${offline[@]}" --prefix "$prefix" "${spec[@]}" > /dev/null \
    || die "npm install failed"
}

install_from_archive() {
  local target archive checksum
  target="$(rust_target)" || exit 1
  if [ -n "$packages" ]; then
    local pattern_version="$version"
    [ "$version" = latest ] && pattern_version="[0-9]*"
    archive="$(local_package "larik-$pattern_version-$target.tar.gz" "release archive for $target")" || exit 1
    checksum="$archive.sha256"
    [ -f "$checksum" ] || die "no checksum ${checksum##*/} beside the archive in $packages"
    cp "$archive" "$checksum" "$work/"
  else
    if [ "$version" = latest ]; then
      version="$(latest_release)" || exit 1
      say "the latest release is $version"
    fi
    local name="larik-$version-$target.tar.gz"
    download "$release_base/download/v$version/$name" "$work/$name"
    download "$release_base/download/v$version/$name.sha256" "$work/$name.sha256"
    archive="$work/$name"
  fi
  local name="${archive##*/}"
  (cd "$work" && verify_checksum "$name") || die "$name does not match its .sha256"
  say "installing $name into $prefix/bin"
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$name" -C "$work/unpacked" larik LICENSE README.md || die "$name is not a larik release archive"
  install -m 755 "$work/unpacked/larik" "$prefix/bin/larik"
  mkdir -p "$prefix/share/doc/larik"
  cp "$work/unpacked/LICENSE" "$work/unpacked/README.md" "$prefix/share/doc/larik/"
}

# The release `latest` redirects to: .../releases/tag/v0.1.0.
latest_release() {
  local url=""
  if command -v curl > /dev/null 2>&1; then
    url="$(curl -fsSLI -o /dev/null -w '%{url_effective}' "$release_base/latest")" || url=""
  elif command -v wget > /dev/null 2>&1; then
    url="$(wget -S --spider "$release_base/latest" 2>&1 | sed -n 's/^ *Location: *//p' | tail -n1)" || url=""
  fi
  url="${url%%[[:space:]]*}"
  case "$url" in
    */tag/v[0-9]*) echo "${url##*/tag/v}" ;;
    *) die "cannot tell the latest release from $release_base/latest; set the option version" ;;
  esac
}

verify_checksum() {
  if command -v sha256sum > /dev/null 2>&1; then
    sha256sum -c --status "$1.sha256"
  elif command -v shasum > /dev/null 2>&1; then
    shasum -a 256 -c --status "$1.sha256"
  else
    die "neither sha256sum nor shasum is installed to check $1"
  fi
}

case "$method" in
  npm) install_with_npm ;;
  archive) install_from_archive ;;
esac

larik="$prefix/bin/larik"
[ -x "$larik" ] || die "$larik was not installed"
said="$("$larik" --version)" || die "$larik --version failed"
case "$version" in
  latest) ;;
  *) case "$said" in "larik $version "* | "larik $version") ;; *) die "asked for $version, $larik --version says: $said" ;; esac ;;
esac
say "installed $said at $larik"

# The sandbox needs unprivileged user namespaces, which many container runtimes refuse. That
# never fails the install: without the sandbox every command asks first. This is the image
# build's container; the running one may differ (its own security options), so say how to look.
sandbox_line="$(cd / && "$larik" sandbox check 2> /dev/null | grep '^Sandbox:' || true)"
if [ -z "$sandbox_line" ]; then
  say "could not run 'larik sandbox check'; run it in the container to see whether commands are sandboxed"
else
  say "$sandbox_line"
  if [ "$(echo "$sandbox_line" | awk '{print $2}')" = off ]; then
    say "inside a container without user namespaces the sandbox is off and every command asks first."
    say "run 'larik sandbox check' in the running container; the Feature's README says how to allow it."
  fi
fi
