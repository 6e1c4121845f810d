#!/usr/bin/env bash
# Builds Larik in release mode and prints the benchmark table. Not part of the test command:
# figures depend on the machine, tests must not.
#
#   bash bench/run.sh [section]     the table, or one section of it
#   bash bench/run.sh layout        writes rpc-server/hot-functions.ld (needs valgrind), the
#                                   functions a session runs, which a release build places
#                                   together; run it again after a toolchain or dependency update
#   bash bench/run.sh install [--debug]
#                                   the packages instead: from an empty prefix to `initialize`
#                                   answered, through npm, pip and uvx (bench/install.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = install ]; then
  shift
  exec bash bench/install.sh "$@"
fi
command -v rg >/dev/null 2>&1 || { echo "bench: installing ripgrep to compare grep against"; apt-get install -y ripgrep >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y ripgrep >/dev/null); }
cargo build --release --locked -p larik -p larik-tests -p larik-bench
target="${CARGO_TARGET_DIR:-target}/release"
echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(date -u +%Y-%m-%d)"
export LARIK_BIN="$target/larik"
"$target/larik-bench" "$@"
