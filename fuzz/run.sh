#!/usr/bin/env bash
# Runs every fuzz target with libFuzzer (`cargo +nightly fuzz`). By default, as CI does, each
# target makes FUZZ_RUNS (5000) executions from the committed seeds with a fixed seed and a fresh
# corpus: the same inputs every time, so a CI run fails only on a change, never on luck. The long
# runs explore: FUZZ_SECONDS=N (or a larger FUZZ_RUNS) with FUZZ_EXPLORE=1, which keeps the
# corpus under ~/.cache/larik and seeds at random. The committed seeds in fuzz/corpus are read,
# never written; a crash is saved under ~/.cache/larik and fails the run. Prints executions and
# coverage per target. Usage: bash fuzz/run.sh [target...]
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$HOME/.cache/larik/tools/bin:$PATH"
cache="$HOME/.cache/larik"
seconds="${FUZZ_SECONDS:-}"
runs="${FUZZ_RUNS:-5000}"
explore="${FUZZ_EXPLORE:-}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(jsonrpc model_stream shell_rules session_file definitions)

command -v cargo-fuzz > /dev/null || { echo "fuzz: cargo-fuzz is missing; scripts/setup.sh installs it" >&2; exit 1; }
rustup run nightly rustc --version > /dev/null || { echo "fuzz: the nightly toolchain is missing (rustup toolchain list)" >&2; exit 1; }

# No sanitizer: the code under test is safe Rust, and without one each target runs several
# times faster; libFuzzer's coverage guidance is unchanged. The bounded runs build without
# optimization (minutes less to build than the seconds they run cost); FUZZ_PROFILE=release for
# the long runs.
profile=(--dev)
if [ "${FUZZ_PROFILE:-dev}" = release ]; then
  profile=(--release)
  # Optimized, without the shipped binary's link-time optimization: on two cores that took over
  # a quarter of an hour to build, and buys the fuzzer little.
  export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
fi
# The checkout's path is written out of the build: every checkout then fuzzes the same binary,
# and a fixed-seed run tries the same inputs wherever it runs (built from two paths, the same
# commit was seen to find an input in one checkout and nothing in the other).
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$PWD=/larik"
fuzz=(-s none --features libfuzzer "${profile[@]}" --target-dir "$cache/target-fuzz")
cargo +nightly fuzz build "${fuzz[@]}"
status=0
for target in "${targets[@]}"; do
  artifacts="$cache/fuzz-artifacts/$target/"
  if [ -n "$explore" ]; then
    corpus="$cache/fuzz-corpus/$target"
    limit=()
  else
    corpus="$(mktemp -d)"
    limit=(-seed=1)
  fi
  mkdir -p "$corpus" "$artifacts"
  if [ -n "$seconds" ]; then limit+=(-max_total_time="$seconds"); else limit+=(-runs="$runs"); fi
  log="$cache/fuzz-$target.log"
  if cargo +nightly fuzz run "${fuzz[@]}" "$target" "$corpus" "fuzz/corpus/$target" -- \
      "${limit[@]}" -artifact_prefix="$artifacts" -max_len=4096 -timeout=10 -print_final_stats=1 > "$log" 2>&1; then
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
    speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
    cov="$(grep -o 'cov: [0-9]*' "$log" | tail -n1)"
    echo "fuzz: $target: ok, $execs executions ($speed/s), $cov"
  else
    status=1
    echo "fuzz: $target: FAILED; the input is in $artifacts; the log's end:" >&2
    tail -n 30 "$log" >&2
  fi
  [ -n "$explore" ] || rm -rf "$corpus"
done
exit $status
