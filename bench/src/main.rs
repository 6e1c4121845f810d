//! `larik-bench`: measures what Larik's targets are about and prints one table. Each figure is a
//! median over repeated runs (min and max beside it), taken on this machine in this run.
//! Run it through `bench/run.sh`, which builds in release mode first.

#![allow(clippy::print_stdout)]

mod agent;
mod stats;
mod tools;

use stats::Row;

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let only: Option<String> = std::env::args().nth(1);
    let mut rows: Vec<Row> = Vec::new();
    if only.as_deref().is_none_or(|section| section == "agent") {
        let idle_seconds = std::env::var("BENCH_IDLE_SECONDS").ok().and_then(|seconds| seconds.parse().ok()).unwrap_or(30);
        rows.extend(runtime.block_on(agent::measure(idle_seconds))?);
    }
    if only.as_deref().is_none_or(|section| section == "tools") {
        rows.extend(runtime.block_on(tools::measure())?);
    }
    stats::print(&rows);
    Ok(())
}
