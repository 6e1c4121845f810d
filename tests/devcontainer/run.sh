#!/usr/bin/env bash
# The dev container Feature (dist/devcontainer-feature/larik/) run as a Feature runs it: install.sh
# with its options as upper-cased environment variables, here offline from the packages
# scripts/npm.sh and scripts/dist.sh make of the binary (LARIK_FEATURE_PACKAGES), into a fresh
# prefix each time (LARIK_FEATURE_PREFIX). Each method gives a PREFIX/bin/larik whose --version is
# the binary's and whose `larik sandbox check` runs; a sandbox that is off is said and does not
# fail the install; a missing or altered package fails it with a message naming the file. Also:
# devcontainer-feature.json's version is the workspace's and each option is one install.sh reads.
set -euo pipefail
cd "$(dirname "$0")/../.."

binary="${LARIK_BIN:-${CARGO_TARGET_DIR:-target}/debug/larik}"
feature=dist/devcontainer-feature/larik
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "devcontainer: FAILED: $*" >&2; exit 1; }
[ -x "$binary" ] || fail "$binary is missing: build the workspace first (scripts/test.sh does) or set LARIK_BIN"
started=$(date +%s%N)
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
expected="$("$binary" --version)"

# --- The manifest ------------------------------------------------------------------------------
python3 - "$feature/devcontainer-feature.json" "$version" "$feature/install.sh" <<'PY' || fail "devcontainer-feature.json"
import json, sys
manifest = json.load(open(sys.argv[1]))
script = open(sys.argv[3]).read()
assert manifest["id"] == "larik", manifest["id"]
assert manifest["version"] == sys.argv[2], f'version {manifest["version"]}, the workspace {sys.argv[2]}'
assert set(manifest["options"]) == {"version", "method"}, manifest["options"]
assert manifest["options"]["version"]["default"] == "latest"
assert manifest["options"]["method"]["enum"] == ["auto", "npm", "archive"]
for name, option in manifest["options"].items():
    assert option["default"] in option.get("enum", [option["default"]]), name
    # A Feature passes each option as its name upper-cased.
    assert "${" + name.upper() + ":-" in script, f"install.sh does not read {name.upper()}"
PY

# --- The packages ------------------------------------------------------------------------------
mkdir -p "$work/npm" "$work/archive" "$work/empty"
bash scripts/npm.sh --binary "$binary" --out "$work/npm" > /dev/null
bash scripts/dist.sh --binary "$binary" --out "$work/archive" > /dev/null
echo "devcontainer: packages built in $(( ($(date +%s%N) - started) / 1000000 )) ms"

# Runs install.sh as root runs a Feature's: options in the environment, from the Feature's folder.
# $1 names the case (its prefix), the rest are the variables. Output in $work/<case>.out.
install_feature() {
  local name="$1"
  shift
  (cd "$feature" && env LARIK_FEATURE_PREFIX="$work/$name" "$@" bash ./install.sh) > "$work/$name.out" 2>&1
}

# A good install: the binary's version at PREFIX/bin/larik, the sandbox's state said, check runs.
installed() {
  local name="$1" how="$2"
  local larik="$work/$name/bin/larik"
  [ -x "$larik" ] || fail "$how: no $larik: $(cat "$work/$name.out")"
  [ "$("$larik" --version)" = "$expected" ] || fail "$how: --version said '$("$larik" --version)', the binary '$expected'"
  grep -q "^larik feature: installed $expected at $larik\$" "$work/$name.out" || fail "$how: $(cat "$work/$name.out")"
  grep -q '^larik feature: Sandbox: ' "$work/$name.out" || fail "$how: the sandbox's state is not said: $(cat "$work/$name.out")"
  local status=0
  (cd "$work" && "$larik" sandbox check > "$work/$name.check") || status=$?
  [ "$status" -le 1 ] && grep -q '^Sandbox: ' "$work/$name.check" || fail "$how: larik sandbox check exited $status"
  echo "devcontainer: $how: $expected, sandbox check runs: ok"
}

# --- npm, then the archive ---------------------------------------------------------------------
export npm_config_cache="$work/npm-cache"
install_feature npm-latest VERSION=latest METHOD=npm LARIK_FEATURE_PACKAGES="$work/npm" || fail "npm: $(cat "$work/npm-latest.out")"
installed npm-latest "method npm, version latest"
[ -d "$work/npm-latest/lib/node_modules/larik" ] || fail "method npm did not install with npm"
install_feature archive VERSION="$version" METHOD=archive LARIK_FEATURE_PACKAGES="$work/archive" || fail "archive: $(cat "$work/archive.out")"
installed archive "method archive, version $version"
[ -f "$work/archive/share/doc/larik/LICENSE" ] || fail "method archive left out the LICENSE"

# auto: npm where npm is on PATH, else the archive. A PATH of everything but node and npm.
install_feature auto-npm VERSION=latest METHOD=auto LARIK_FEATURE_PACKAGES="$work/npm" || fail "auto with npm: $(cat "$work/auto-npm.out")"
installed auto-npm "method auto with npm"
mkdir -p "$work/no-node"
for tool in /usr/bin/* /bin/*; do
  case "${tool##*/}" in node | npm | npx | corepack) continue ;; esac
  [ -e "$work/no-node/${tool##*/}" ] || ln -s "$tool" "$work/no-node/${tool##*/}"
done
install_feature auto-archive PATH="$work/no-node" METHOD=auto LARIK_FEATURE_PACKAGES="$work/archive" || fail "auto without npm: $(cat "$work/auto-archive.out")"
installed auto-archive "method auto without npm"
[ ! -e "$work/auto-archive/lib/node_modules" ] || fail "method auto without npm used npm"

# --- A container without user namespaces: said, and the install still succeeds -----------------
install_feature no-userns METHOD=archive LARIK_FEATURE_PACKAGES="$work/archive" LARIK_SANDBOX_SIMULATE=no-namespaces \
  || fail "a sandbox that is off failed the install: $(cat "$work/no-userns.out")"
grep -q '^larik feature: Sandbox: *off' "$work/no-userns.out" || fail "the sandbox's off state is not said: $(cat "$work/no-userns.out")"
grep -q 'the sandbox is off and every command asks first' "$work/no-userns.out" || fail "what an off sandbox means is not said: $(cat "$work/no-userns.out")"
echo "devcontainer: no user namespaces: said, install succeeds: ok"

# --- What must fail ----------------------------------------------------------------------------
# $1 case, $2 text the error must hold, the rest the variables.
refused() {
  local name="$1" needle="$2"
  shift 2
  if install_feature "$name" "$@"; then fail "$name: install.sh succeeded: $(cat "$work/$name.out")"; fi
  grep -q "^larik feature: error: .*$needle" "$work/$name.out" || fail "$name: the error does not say '$needle': $(cat "$work/$name.out")"
  [ ! -e "$work/$name/bin/larik" ] || fail "$name: installed a larik anyway"
  echo "devcontainer: $name: refused, saying '$needle': ok"
}
refused "missing npm packages" "no npm package larik-" METHOD=npm VERSION="$version" LARIK_FEATURE_PACKAGES="$work/empty"
refused "missing archive" "larik-$version-.*\\.tar\\.gz" METHOD=archive VERSION="$version" LARIK_FEATURE_PACKAGES="$work/empty"
refused "another version" "larik-9.9.9-" METHOD=archive VERSION=9.9.9 LARIK_FEATURE_PACKAGES="$work/archive"
mkdir -p "$work/altered"
archive="$(ls "$work/archive"/*.tar.gz)"
cp "$archive" "$archive.sha256" "$work/altered/"
printf 'x' >> "$work/altered/${archive##*/}"
refused "altered archive" "does not match its .sha256" METHOD=archive LARIK_FEATURE_PACKAGES="$work/altered"
refused "unknown method" "method 'pip'" METHOD=pip LARIK_FEATURE_PACKAGES="$work/archive"

echo "devcontainer: npm, archive, auto, no user namespaces, refusals: ok in $(( ($(date +%s%N) - started) / 1000000 )) ms"
