#!/usr/bin/env bash
# Sets up everything and runs every test: unit and end-to-end tests in Rust, then the ACP SDK
# conformance test in Node. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# The end-to-end tests drive the real binaries, so build them first.
cargo build --workspace --bins --locked
cargo test --workspace --locked
(cd tests/acp-sdk && npm test)
