#!/usr/bin/env bash
# The prebuilt packages, installed the way their users install them, from local files and offline
# (nothing is looked up by name): the wheel with maturin from the debug build (scripts/wheel.sh),
# the npm packages from the same binary (scripts/npm.sh); then `npm install --prefix`,
# `npm install -g`, `npx`, `pip install` into a venv and `uvx` (`npx` and `uvx` as the ACP
# registry's entries run them) each give a `larik` whose `--version` is the binary's and whose
# `larik acp` answers `initialize` and opens a session. The npm launcher also passes on exit
# codes and signals, and without its platform package says which platform it is on and how else
# to install.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"

target_dir="${CARGO_TARGET_DIR:-target}"
binary="$target_dir/debug/larik"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "packages: FAILED: $*" >&2; exit 1; }
[ -x "$binary" ] || fail "$binary is missing: build the workspace first (scripts/test.sh does)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
tools="$(bash scripts/package-tools.sh)"

# --- Build -----------------------------------------------------------------------------------
# First the wheel: its cargo run compiles `larik` again when HEAD moved since the test build,
# and writes the same target/debug/larik the npm packages then take.
started=$(date +%s%N)
wheel="$(CARGO_TARGET_DIR="$target_dir" bash scripts/wheel.sh --out "$work/wheel")"
echo "packages: $(basename "$wheel") built in $(( ($(date +%s%N) - started) / 1000000 )) ms"
expected="$("$binary" --version)"
mapfile -t tarballs < <(bash scripts/npm.sh --binary "$binary" --out "$work/npm")
platform_tgz="${tarballs[0]}"
launcher_tgz="${tarballs[1]}"
platform_package="larik-$(node -p 'process.platform + "-" + process.arch')"
[ "$(basename "$platform_tgz")" = "$platform_package-$version.tgz" ] || fail "the platform package packed as $platform_tgz"
[ "$(basename "$launcher_tgz")" = "larik-$version.tgz" ] || fail "the launcher packed as $launcher_tgz"

# --- What each install must give ---------------------------------------------------------------
# A private home, and a model endpoint on 127.0.0.1 that nothing serves: opening a session needs a
# configured model but sends it nothing.
mkdir -p "$work/home" "$work/project"
agent_env=(env -i "PATH=$PATH" "HOME=$work/home" "XDG_CONFIG_HOME=$work/home/.config"
  "XDG_DATA_HOME=$work/home/.local/share" "LARIK_LOG=warn" "ANTHROPIC_API_KEY=test-key"
  "ANTHROPIC_BASE_URL=http://127.0.0.1:9" "LARIK_MODEL=claude-mock")
works() {
  local how="$1"
  shift
  local said
  said="$("${agent_env[@]}" "$@" --version)" || fail "$how: --version exited $?"
  [ "$said" = "$expected" ] || fail "$how: --version said '$said', the binary '$expected'"
  (cd "$work/project" && "${agent_env[@]}" python3 "$root/tests/dist/acp_handshake.py" --session -- "$@" > "$work/handshake") \
    || fail "$how: larik acp"
  grep -q '^session/new: sessionId ' "$work/handshake" || fail "$how: $(cat "$work/handshake")"
  echo "packages: $how: --version, initialize, session/new: ok"
}

# --- npm ---------------------------------------------------------------------------------------
# A private cache and --offline: a package that is not one of the local files cannot be fetched.
export npm_config_cache="$work/npm-cache" npm_config_audit=false npm_config_fund=false
export npm_config_update_notifier=false npm_config_loglevel=error
npm install --offline --prefix "$work/npm-local" "$platform_tgz" "$launcher_tgz" > /dev/null
works "npm install --prefix" "$work/npm-local/node_modules/.bin/larik"
npm install --offline --global --prefix "$work/npm-global" "$platform_tgz" "$launcher_tgz" > /dev/null
works "npm install -g" env PATH="$work/npm-global/bin:$PATH" larik
# As `npx larik acp` (the ACP registry's `npx` entry) runs it, from the files instead of by name.
works "npx" npx --offline --yes --package "$platform_tgz" --package "$launcher_tgz" -- larik

launcher="$work/npm-local/node_modules/.bin/larik"
# The binary's exit code comes back through the launcher (clap's 2 for an unknown option).
status=0
"$launcher" --no-such-option > /dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "the launcher exited $status for the binary's 2"
# SIGTERM to the launcher reaches the binary, which exits (`larik acp` ends cleanly on it) while
# its stdin is still open, so it is the signal and not the end of input that stopped it; the
# launcher then ends the way the binary did. Unforwarded, the binary would be orphaned.
mkfifo "$work/stdin"
"${agent_env[@]}" "$launcher" acp < "$work/stdin" > /dev/null 2>&1 &
node_pid=$!
exec 3> "$work/stdin"
child=""
for _ in $(seq 100); do
  child="$(pgrep -P "$node_pid" || true)"
  [ -n "$child" ] && break
  sleep 0.1
done
[ -n "$child" ] || fail "the launcher started no binary"
kill -TERM "$node_pid"
status=0
wait "$node_pid" || status=$?
for _ in $(seq 100); do kill -0 "$child" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$child" 2> /dev/null; then
  kill -KILL "$child"
  fail "the binary outlived the launcher's SIGTERM (the launcher exited $status)"
fi
exec 3>&-
[ "$status" = 0 ] || fail "the launcher exited $status after SIGTERM; the binary exits 0 on it"
echo "packages: npm launcher: exit code and SIGTERM passed on: ok"

# Without its platform package (as `--omit=optional` leaves it, or on a platform with none) the
# launcher fails and says what it is on and how else to install.
npm install --offline --omit=optional --prefix "$work/npm-alone" "$launcher_tgz" > /dev/null
[ ! -e "$work/npm-alone/node_modules/$platform_package" ] || fail "--omit=optional installed the platform package"
status=0
message="$("$work/npm-alone/node_modules/.bin/larik" --version 2>&1)" || status=$?
[ "$status" = 1 ] || fail "the launcher alone exited $status: $message"
for needle in "$(node -p 'process.platform + " " + process.arch')" "glibc" "pipx install larik" "uvx larik acp" \
  "pip install larik" "cargo binstall larik" "larik-$version-<target>.tar.gz" "cargo install --locked --path rpc-server"; do
  case "$message" in *"$needle"*) ;; *) fail "the launcher's error does not say '$needle': $message" ;; esac
done
echo "packages: npm launcher without its platform package names the platform and the other installs: ok"

# --- PyPI --------------------------------------------------------------------------------------
case "$(basename "$wheel")" in
  "larik-$version-py3-none-"*.whl) ;;
  *) fail "the wheel is named $(basename "$wheel")" ;;
esac
python3 -m venv "$work/venv"
PIP_FIND_LINKS="" "$work/venv/bin/pip" install --quiet --no-index --disable-pip-version-check "$wheel"
works "pip install" "$work/venv/bin/larik"
# As the ACP registry starts a `uvx` entry (`uvx larik@X.Y.Z acp`), from the wheel's directory
# instead of the index; the system's Python, never one downloaded.
works "uvx larik@$version" env UV_CACHE_DIR="$work/uv-cache" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1 \
  "$tools/uvx" --offline --no-index --find-links "$(dirname "$wheel")" "larik@$version"

echo "packages: npm (local, global, npx, launcher alone), pip and uvx: ok"
