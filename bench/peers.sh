#!/usr/bin/env bash
# Figure 8 (optional, outside CI): installs two other ACP agents from npm into ~/.cache/larik/peers
# and prints their ready time and idle footprint beside Larik's, measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
peers="${LARIK_PEERS_DIR:-$HOME/.cache/larik/peers}"
mkdir -p "$peers"
npm install --silent --no-audit --no-fund --prefix "$peers" @zed-industries/codex-acp@0.16.0 @zed-industries/claude-agent-acp@0.23.1
cargo build --release --locked -p larik -p larik-tests -p larik-bench
target="${CARGO_TARGET_DIR:-target}/release"
echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(date -u +%Y-%m-%d)"
# The launcher script of codex-acp only finds its platform binary; run that binary directly.
codex="$(find "$peers/node_modules/@zed-industries" -path '*codex-acp-linux-*/bin/codex-acp' | head -1)"
export LARIK_BIN="$target/larik" LARIK_PEER_CODEX="$codex" LARIK_PEER_CLAUDE="$peers/node_modules/.bin/claude-agent-acp"
BENCH_IDLE_SECONDS="${BENCH_IDLE_SECONDS:-10}" "$target/larik-bench" peers
