//! The sandbox's network figures: what a sandboxed command pays for its proxy (made per command;
//! the carrier and the agent's side do nothing until the command connects), then the downloads
//! (`network_download`).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use larik_core::sandbox::network::proxy::NetworkProxy;
use larik_core::sandbox::network::{DomainPattern, DomainPolicy, NoOneToAsk};
use larik_core::sandbox::{PreparedCommand, Sandbox};

use crate::stats::{Row, duration_row};

const RUNS: usize = 20;

pub async fn measure() -> anyhow::Result<Vec<Row>> {
    let project = tempfile::tempdir()?;
    let policy = DomainPolicy {
        allowed: DomainPattern::parse("bench.localhost").into_iter().collect(),
        ..DomainPolicy::default()
    };
    let sandbox = Sandbox::new(larik_tests::harness::larik_bin(), project.path().to_path_buf(), Vec::new(), &[], false)
        .with_domains(policy.clone());
    let mut closed = Vec::with_capacity(RUNS);
    let mut proxied = Vec::with_capacity(RUNS);
    for index in 0..=RUNS {
        let started = Instant::now();
        run(sandbox.confine("true", None)?, project.path()).await?;
        let without = started.elapsed();
        let started = Instant::now();
        let proxy = NetworkProxy::start(policy.clone(), Arc::new(NoOneToAsk))?;
        run(sandbox.confine("true", Some(&proxy))?, project.path()).await?;
        drop(proxy);
        if index > 0 {
            closed.push(without);
            proxied.push(started.elapsed());
        }
    }
    let mut rows = vec![
        duration_row("bash -c true, sandboxed, no network", &closed, "(reference)"),
        duration_row("bash -c true, sandboxed, with its proxy", &proxied, "< no network + 2 ms"),
    ];
    rows.extend(crate::network_download::rows(&sandbox, project.path(), &policy).await?);
    Ok(rows)
}

pub(crate) async fn run(prepared: PreparedCommand, cwd: &Path) -> anyhow::Result<String> {
    let output = tokio::process::Command::new(&prepared.program).args(&prepared.args).current_dir(cwd).output().await?;
    anyhow::ensure!(output.status.success(), "the sandboxed command failed: {}", output.status);
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
