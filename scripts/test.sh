#!/usr/bin/env bash
# Sets up everything and runs every test: unit and end-to-end tests in Rust, then the ACP SDK
# conformance test in Node, then the editor plugins' tests. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# The end-to-end tests drive the real binaries, so build them first.
cargo build --workspace --bins --locked
# Every suite runs even when an earlier one fails, so one run shows every failure.
status=0
# The one format (rustfmt.toml) and clippy's lints, warnings as errors, before the tests.
cargo fmt --all --check || { echo "test: run \`cargo fmt --all\`" >&2; status=1; }
cargo clippy --workspace --all-targets --locked -- -D warnings || status=1
cargo test --workspace --locked || status=1
# The build other systems get (no Linux backend), compiled and tested here.
bash tests/portable/run.sh || status=1
bash tests/dist/run.sh || status=1
# The npm packages and the wheel, built from the debug build and installed offline from the files.
bash tests/dist/packages.sh || status=1
# The GitHub Action's script against the mock model: answers, the permission policy, a budget stop.
bash tests/action/run.sh || status=1
# The dev container Feature's install script, offline from the package files, both ways.
bash tests/devcontainer/run.sh || status=1
# `ssh host larik acp` through a real sshd in a network namespace: a turn, the client killed
# mid-turn with nothing left running on the remote side, the session loaded again.
bash tests/ssh/run.sh || status=1
# Each fuzz target for 5000 fixed-seed executions on nightly; the long runs are in RELIABILITY.md.
bash fuzz/run.sh || status=1
(cd tests/acp-sdk && npm test) || status=1
bash tests/mcp-conformance/run.sh || status=1
bash editors/neovim/scripts/test.sh || status=1
bash editors/vscode/scripts/test.sh || status=1
bash editors/helix/scripts/test.sh || status=1
# The ACP registry entry against the registry's schema (pytest from the Helix suite's venv).
editors/helix/.cache/venv/bin/python -m pytest -q dist/acp-registry || status=1
exit $status
