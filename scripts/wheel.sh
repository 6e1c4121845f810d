#!/usr/bin/env bash
# Builds the Python wheel of the larik binary with maturin (rpc-server/pyproject.toml, bindings
# "bin": the binary is the wheel's one script) and prints the wheel's path. maturin audits the
# binary and tags the wheel with the oldest manylinux its glibc symbol versions allow.
#
#   bash scripts/wheel.sh --out DIR             dev profile, like `cargo build`: in the target dir
#                                               the tests built, only a changed `larik` is compiled
#   bash scripts/wheel.sh --release --out DIR   release profile, the wheel to publish
set -euo pipefail
cd "$(dirname "$0")/.."

out=""
profile=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --release) profile=(--release); shift ;;
    *) echo "wheel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "usage: bash scripts/wheel.sh [--release] --out DIR" >&2; exit 2; }

tools="$(bash scripts/package-tools.sh)"
mkdir -p "$out"
# A directory of its own, so the one wheel in it is this build's whatever DIR already holds.
built="$(mktemp -d)"
trap 'rm -rf "$built"' EXIT
# maturin's progress goes to stderr; stdout carries only the wheel's path.
"$tools/maturin" build --manifest-path rpc-server/Cargo.toml "${profile[@]}" --out "$built" >&2
wheel="$(find "$built" -name '*.whl')"
[ "$(echo "$wheel" | wc -l)" = 1 ] && [ -n "$wheel" ] || { echo "wheel.sh: expected one wheel, found: $wheel" >&2; exit 1; }
mv "$wheel" "$out/"
echo "$out/$(basename "$wheel")"
