#!/usr/bin/env bash
# Packs a release of the larik binary for this machine: larik-<version>-<target>.tar.gz
# (the binary at the archive's root, as `cmd = "./larik"` in an ACP registry entry or Zed's
# agent settings expects, with LICENSE and README.md) and its .sha256 beside it.
#
#   bash scripts/dist.sh                  build with `cargo build --release --locked`, then pack
#   bash scripts/dist.sh --binary PATH    pack a binary built already (the tests pack the debug one)
#   bash scripts/dist.sh --out DIR        write the archive to DIR (default: the target dir's dist/)
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
out="${CARGO_TARGET_DIR:-target}/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "dist.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -z "$binary" ]; then
  cargo build --release --locked -p larik
  binary="${CARGO_TARGET_DIR:-target}/release/larik"
fi
[ -x "$binary" ] || { echo "dist.sh: $binary is not an executable" >&2; exit 1; }

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
target="$(rustc -vV | sed -n 's/^host: //p')"
name="larik-${version}-${target}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp "$binary" "$stage/larik"
chmod 755 "$stage/larik"
cp LICENSE README.md "$stage/"
mkdir -p "$out"
# Sorted names, fixed owner and times: the same binary packs to the same bytes.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00:00Z' -C "$stage" -czf "$out/$name.tar.gz" larik LICENSE README.md
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz"
