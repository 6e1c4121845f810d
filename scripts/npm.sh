#!/usr/bin/env bash
# Packs the npm packages for this machine from a built binary: the platform package
# `larik-<platform>-<arch>` holding it and the launcher `larik` (dist/npm/), both at the
# workspace version. Prints the two .tgz paths, the platform package first. Each platform's
# package is packed on that platform; the launcher is the same from any of them.
#
#   bash scripts/npm.sh --binary PATH --out DIR
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "npm.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$binary" ] && [ -n "$out" ] || { echo "usage: bash scripts/npm.sh --binary PATH --out DIR" >&2; exit 2; }
[ -x "$binary" ] || { echo "npm.sh: $binary is not an executable" >&2; exit 1; }

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
target="$(rustc -vV | sed -n 's/^host: //p')"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
node dist/npm/stage.js --binary "$binary" --version "$version" --target "$target" --out "$stage" > "$stage/dirs"
while read -r dir; do
  # `npm pack` prints the tarball's file name last; nothing is looked up or installed.
  name="$(cd "$dir" && npm pack --silent --pack-destination "$out" | tail -n1)"
  echo "$out/$name"
done < "$stage/dirs"
