#!/usr/bin/env bash
# The install paths a user takes, for real: `cargo install --locked --path rpc-server` (here with
# --debug and the suite's target directory, so it reuses the build instead of making a release
# one), then `scripts/dist.sh` packing that binary; the archive holds `./larik` at its root, its
# checksum verifies, `cargo binstall` (rpc-server/Cargo.toml's metadata) would ask for it by its
# name, and the unpacked binary answers `--version` and an ACP `initialize`.
set -euo pipefail
cd "$(dirname "$0")/../.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "dist: FAILED: $*" >&2; exit 1; }

cargo install --quiet --locked --debug --path rpc-server --root "$work/root"
installed="$work/root/bin/larik"
commit="$(git rev-parse --short=12 HEAD)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
[ "$("$installed" --version)" = "larik $version ($commit)" ] || fail "cargo install gave: $("$installed" --version)"

archive="$(bash scripts/dist.sh --binary "$installed" --out "$work/out")"
target="$(rustc -vV | sed -n 's/^host: //p')"
[ "$archive" = "$work/out/larik-$version-$target.tar.gz" ] || fail "archive named $archive"
[ "$(tar -tzf "$archive" | sort | tr '\n' ' ')" = "LICENSE README.md larik " ] || fail "archive holds: $(tar -tzf "$archive")"
(cd "$work/out" && sha256sum --quiet -c "larik-$version-$target.tar.gz.sha256") || fail "checksum"
# `cargo binstall larik` asks for exactly this archive and finds `larik` at its root.
mapfile -t binstall < <(python3 tests/dist/binstall_url.py "$target")
[ "${binstall[0]}" = "https://github.com/OWNER/larik/releases/download/v$version/$(basename "$archive")" ] \
  || fail "cargo binstall's URL for $target is ${binstall[0]}"
[ "${binstall[1]}" = "larik" ] || fail "cargo binstall's binary path is ${binstall[1]}"
first="$(sha256sum < "$archive")"
bash scripts/dist.sh --binary "$installed" --out "$work/again" > /dev/null
[ "$(sha256sum < "$work/again/larik-$version-$target.tar.gz")" = "$first" ] || fail "packing twice gave different bytes"

mkdir "$work/unpacked"
tar -xzf "$archive" -C "$work/unpacked"
cd "$work/unpacked"
[ "$(./larik --version)" = "larik $version ($commit)" ] || fail "unpacked --version"
answer="$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}' | HOME="$work" timeout 10 ./larik acp)"
case "$answer" in
  *'"protocolVersion":1'*) ;;
  *) fail "initialize answered: $answer" ;;
esac
echo "dist: cargo install, archive layout, checksum, cargo binstall's URL, reproducible packing, unpacked binary: ok"
