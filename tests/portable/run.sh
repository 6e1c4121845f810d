#!/usr/bin/env bash
# The build other systems get, proved on this one: with the `linux` feature off, the Linux
# sandbox backend and every Linux-only call are left out (the portable variants in
# larik-host's `platform` module and the sandbox's `backend` take their place).
#   1. the unit tests of every crate below the binary pass in that build;
#   2. the `larik` binary built so names no backend, and nothing runs unconfined without asking;
#   3. end-to-end suites that need no sandbox pass against that binary (the others assert what a
#      sandboxed command does, or the exact text of a turn, which there begins with the notice
#      that the sandbox is off; `kills` needs the parent-death signal only Linux has).
# The default binary is put back in place afterwards for whatever runs next.
set -euo pipefail
cd "$(dirname "$0")/../.."

target="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo test --locked --no-default-features -p larik-host -p larik-sandbox -p larik-tools -p larik-core
cargo build --locked --no-default-features --features browser -p larik
cp "$target/debug/larik" "$work/larik"
cargo build --locked -p larik

LARIK_BIN="$work/larik" LARIK_EXPECT_BACKEND=none cargo test --locked -p larik-tests \
  --test sandbox_backend --test acp_extensions --test checkpoints --test prompt_cache --test managed_policy \
  --test provider_faults --test scoped_memory --test secrets
echo "portable: the build without the Linux backend compiles, passes its tests and asks before every command"
