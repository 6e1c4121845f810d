#!/usr/bin/env bash
# How long a user waits from an empty prefix to a working agent, per package: the time from
# starting the install until `larik acp` has answered `initialize`. The packages are built first
# (not timed) and installed from the local files, offline, as tests/dist/packages.sh does, so the
# figure is the install itself and the first start, not a download. Run by `bash bench/run.sh
# install`; not part of the test command.
#
#   bash bench/install.sh [--debug] [--rounds N]
#
# The release build by default, as the other figures; --debug packs the debug build the tests
# made instead (a larger binary: an upper bound for unpacking). Each figure is the median of N
# rounds (default 5), min and max beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=debug; shift ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

target_dir="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
tools="$(bash scripts/package-tools.sh)"

if [ "$profile" = release ]; then
  cargo build --release --locked -p larik
  wheel="$(bash scripts/wheel.sh --release --out "$work/wheel")"
else
  wheel="$(bash scripts/wheel.sh --out "$work/wheel")"
fi
binary="$target_dir/$profile/larik"
mapfile -t tarballs < <(bash scripts/npm.sh --binary "$binary" --out "$work/npm")

echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(date -u +%Y-%m-%d)"
echo "Binary: $profile, $(( $(stat -c %s "$binary") / 1048576 )) MiB; npm platform package $(( $(stat -c %s "${tarballs[0]}") / 1048576 )) MiB, wheel $(( $(stat -c %s "$wheel") / 1048576 )) MiB"

mkdir -p "$work/home"
agent_env=(env -i "PATH=$PATH" "HOME=$work/home" "LARIK_LOG=warn")
# Seconds from the install's start to the initialize answer, as acp_handshake.py reports it.
answered() { sed -n 's/^initialize answered \([0-9.]*\) s after the start$/\1/p'; }

measure() {
  local name="$1" round start
  shift
  : > "$work/times"
  for round in $(seq "$rounds"); do
    rm -rf "$work/prefix" "$work/cache"
    start="$(date +%s.%N)"
    "$@" "$start" | answered >> "$work/times"
  done
  [ "$(wc -l < "$work/times")" = "$rounds" ] || { echo "install.sh: $name: a round did not answer" >&2; exit 1; }
  sort -n "$work/times" | awk -v name="$name" '{ t[NR] = $1 } END {
    printf "| %s | %.2f s | %.2f s | %.2f s |\n", name, t[int((NR + 1) / 2)], t[1], t[NR] }'
}

npm_prefix() {
  npm install --offline --silent --no-audit --no-fund --cache "$work/cache" --prefix "$work/prefix" "${tarballs[@]}"
  "${agent_env[@]}" python3 tests/dist/acp_handshake.py --since "$1" -- "$work/prefix/node_modules/.bin/larik"
}
npm_global() {
  npm install --offline --silent --no-audit --no-fund --cache "$work/cache" --global --prefix "$work/prefix" "${tarballs[@]}"
  "${agent_env[@]}" python3 tests/dist/acp_handshake.py --since "$1" -- "$work/prefix/bin/larik"
}
pip_venv() {
  python3 -m venv "$work/prefix"
  PIP_FIND_LINKS="" "$work/prefix/bin/pip" install --quiet --no-index --disable-pip-version-check "$wheel"
  "${agent_env[@]}" python3 tests/dist/acp_handshake.py --since "$1" -- "$work/prefix/bin/larik"
}
uvx_cold() {
  "${agent_env[@]}" python3 tests/dist/acp_handshake.py --since "$1" -- env UV_CACHE_DIR="$work/cache" \
    UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1 "$tools/uvx" --quiet --offline --no-index \
    --find-links "$(dirname "$wheel")" "larik@$version"
}

echo
echo "| install, from an empty prefix, until initialize is answered | median | min | max |"
echo "|---|---|---|---|"
measure "npm install --prefix (both packages)" npm_prefix
measure "npm install -g (both packages)" npm_global
measure "python3 -m venv + pip install (the wheel)" pip_venv
measure "uvx larik@$version acp, empty uv cache" uvx_cold
