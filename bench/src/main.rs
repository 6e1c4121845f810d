//! `larik-bench`: measures what Larik's targets are about and prints one table. Each figure is a
//! median over repeated runs (min and max beside it), taken on this machine in this run.
//! Run it through `bench/run.sh`, which builds in release mode first.

#![allow(clippy::print_stdout)]

mod agent;
mod cost;
mod file_server;
mod layout;
mod layout_check;
mod load;
mod long_sessions;
mod mcp_servers;
mod network;
mod network_download;
mod peers;
mod process;
mod stats;
mod stored_sessions;
mod tools;

use stats::Row;

fn main() -> anyhow::Result<()> {
    let _copy = measure_a_fresh_copy()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    // No argument: everything. `agent` or `tools`: that half. Otherwise one agent section.
    let only: Option<String> = std::env::args().nth(1);
    // `layout` measures nothing: it writes the linker script of the functions a session runs.
    if only.as_deref() == Some("layout") {
        return runtime.block_on(layout::write_script());
    }
    let mut rows: Vec<Row> = Vec::new();
    let idle_seconds = std::env::var("BENCH_IDLE_SECONDS").ok().and_then(|seconds| seconds.parse().ok()).unwrap_or(30);
    for section in agent::SECTIONS {
        if only.as_deref().is_none_or(|wanted| wanted == "agent" || wanted == *section) {
            rows.extend(runtime.block_on(agent::measure(section, idle_seconds))?);
        }
    }
    // Peers are measured only when asked for (bench/peers.sh installs them).
    if only.as_deref() == Some("peers") {
        rows.extend(runtime.block_on(peers::measure(idle_seconds))?);
    }
    if only.as_deref().is_none_or(|section| section == "cost") {
        rows.extend(runtime.block_on(cost::measure())?);
    }
    if only.as_deref().is_none_or(|section| section == "tools") {
        rows.extend(runtime.block_on(tools::measure())?);
    }
    if only.as_deref().is_none_or(|section| section == "network") {
        rows.extend(runtime.block_on(network::measure())?);
    }
    stats::print(&rows);
    Ok(())
}

/// Points `LARIK_BIN` at a copy of the binary just written, as an install or an upgrade leaves
/// it: every page of it in the page cache. The resident code a process shows depends on which of
/// its file's pages are cached (the kernel maps the cached ones around each page that faults),
/// so two builds are only compared fairly in the same state: a binary built an hour ago and
/// partly evicted since measured up to 2 MiB less after a turn than a fresh copy of itself.
/// The minimal binary the ready figures are compared with is copied beside it, so both are
/// measured in the same state.
fn measure_a_fresh_copy() -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("larik");
    std::fs::copy(larik_tests::harness::larik_bin(), &copy)?;
    let minimal = std::env::current_exe()?.with_file_name(agent::MINIMAL_BINARY);
    if minimal.exists() {
        std::fs::copy(&minimal, dir.path().join(agent::MINIMAL_BINARY))?;
    }
    // SAFETY: no other thread runs yet (the runtime is built after), so nothing reads the
    // environment while it changes.
    unsafe { std::env::set_var("LARIK_BIN", &copy) };
    Ok(dir)
}
