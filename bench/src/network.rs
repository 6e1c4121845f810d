//! The sandbox's network figures: what a sandboxed command pays for its proxy (made per command;
//! the carrier and the agent's side do nothing until the command connects), and a large download
//! through the proxy against the same download outside the sandbox, from a server on this
//! machine under a `*.localhost` name the lists name.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use larik_core::sandbox::network::proxy::NetworkProxy;
use larik_core::sandbox::network::{DomainPattern, DomainPolicy, NoOneToAsk};
use larik_core::sandbox::{PreparedCommand, Sandbox};

use crate::stats::{Row, duration_row, median_of};

const RUNS: usize = 20;
const DOWNLOADS: usize = 5;
const DOWNLOAD_BYTES: u64 = 256 << 20;

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
    rows.extend(download(&sandbox, project.path(), policy).await?);
    Ok(rows)
}

async fn run(prepared: PreparedCommand, cwd: &Path) -> anyhow::Result<String> {
    let output = tokio::process::Command::new(&prepared.program).args(&prepared.args).current_dir(cwd).output().await?;
    anyhow::ensure!(output.status.success(), "the sandboxed command failed: {}", output.status);
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The transfer rate `curl -w '%{speed_download}'` printed, in MiB/s: the body's bytes over the
/// time from the request to its last byte, so a sandbox's start is not counted as throughput.
fn transfer_rate(printed: &str) -> anyhow::Result<f64> {
    let bytes_per_second: f64 =
        printed.trim().parse().map_err(|_| anyhow::anyhow!("curl printed no rate: {printed:?}"))?;
    Ok(bytes_per_second / f64::from(1u32 << 20))
}

/// `curl` of a 256 MiB file, plain and sandboxed through the proxy, alternating.
async fn download(sandbox: &Sandbox, cwd: &Path, policy: DomainPolicy) -> anyhow::Result<Vec<Row>> {
    let site = tempfile::tempdir()?;
    std::fs::File::create(site.path().join("large"))?.set_len(DOWNLOAD_BYTES)?;
    let mut server = std::process::Command::new("python3")
        .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
        .current_dir(site.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let port = server_port(&mut server)?;
    let mut rows = Vec::new();
    // Unlimited, loopback against loopback; then at 1 Gbit/s, a fast real link.
    for limit in ["", " --limit-rate 125M"] {
        let command =
            format!("curl -sS{limit} -o /dev/null -w '%{{speed_download}}' http://bench.localhost:{port}/large");
        rows.extend(download_rows(sandbox, cwd, &policy, &command, limit).await?);
    }
    let _ = server.kill();
    Ok(rows)
}

async fn download_rows(
    sandbox: &Sandbox,
    cwd: &Path,
    policy: &DomainPolicy,
    command: &str,
    limit: &str,
) -> anyhow::Result<Vec<Row>> {
    let (mut plain, mut proxied) = (Vec::new(), Vec::new());
    let (mut plain_rates, mut proxied_rates) = (Vec::new(), Vec::new());
    for _ in 0..DOWNLOADS {
        let started = Instant::now();
        plain_rates.push(transfer_rate(&run(PreparedCommand::unconfined(command), cwd).await?)?);
        plain.push(started.elapsed());
        let proxy = NetworkProxy::start(policy.clone(), Arc::new(NoOneToAsk))?;
        let started = Instant::now();
        proxied_rates.push(transfer_rate(&run(sandbox.confine(command, Some(&proxy))?, cwd).await?)?);
        proxied.push(started.elapsed());
    }
    let (rate_through_proxy, rate_plain) = (median_of(&proxied_rates), median_of(&plain_rates));
    let ratio = rate_through_proxy / rate_plain;
    Ok(vec![
        duration_row(&format!("curl{limit} 256 MiB from a local server, plain"), &plain, "(reference)"),
        duration_row(
            &format!("curl{limit} 256 MiB, sandboxed through the proxy (with the sandbox's start)"),
            &proxied,
            "(see ratio)",
        ),
        Row::single(
            format!("proxy throughput / plain throughput{limit} (curl's transfer rate)"),
            format!("{ratio:.2} ({rate_through_proxy:.0} vs {rate_plain:.0} MiB/s)"),
            ">= 0.8",
        ),
    ])
}

/// `python3 -m http.server` says where it listens on its first line.
fn server_port(server: &mut std::process::Child) -> anyhow::Result<u16> {
    let stdout = server.stdout.take().ok_or_else(|| anyhow::anyhow!("no output from the server"))?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)?;
    let port = line.split("port ").nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap_or_default();
    Ok(port.parse()?)
}
