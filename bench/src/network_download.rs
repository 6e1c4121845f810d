//! A large download through the sandbox's proxy against the same download outside the sandbox,
//! from a file server on this machine under a `*.localhost` name the lists name: the transfer
//! rates, and the CPU each party spends per GiB (the server, `curl`, the proxy's relay), from
//! which the ratio this machine's cores allow at best follows.
//!
//! On loopback the server, the relay and `curl` all run on this machine's cores; through the
//! proxy every byte crosses the TCP stack twice, so on two cores the relay's share of the CPU
//! is taken from the other two, where a real server's is not.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use larik_core::sandbox::network::proxy::NetworkProxy;
use larik_core::sandbox::network::{DomainPolicy, NoOneToAsk};
use larik_core::sandbox::{PreparedCommand, Sandbox};

use crate::file_server::FileServer;
use crate::process::cpu_used;
use crate::stats::{Row, duration_row, median, median_of};

const DOWNLOAD_BYTES: u64 = 256 << 20;

/// One way of downloading, measured several times.
struct Link {
    /// What `curl` is given beyond the URL.
    curl_options: &'static str,
    /// How the rows name it.
    label: &'static str,
    downloads: usize,
}

/// Unlimited, loopback against loopback; then at 10 and 1 Gbit/s, fast real links.
const LINKS: [Link; 3] = [
    Link { curl_options: "", label: "", downloads: 9 },
    Link { curl_options: " --limit-rate 1250M", label: " at 10 Gbit/s", downloads: 5 },
    Link { curl_options: " --limit-rate 125M", label: " at 1 Gbit/s", downloads: 3 },
];

/// What one download measured.
struct Download {
    /// `curl`'s transfer rate, MiB/s.
    rate: f64,
    elapsed: Duration,
    /// CPU of the file server's answer.
    in_server: Duration,
    /// CPU of this process beyond the server's: through the proxy, the proxy's (the relay's).
    in_proxy: Duration,
    /// CPU of the command: `curl`, and when sandboxed the sandbox's start.
    in_command: Duration,
}

pub async fn rows(sandbox: &Sandbox, cwd: &Path, policy: &DomainPolicy) -> anyhow::Result<Vec<Row>> {
    let site = tempfile::tempdir()?;
    let file = site.path().join("large");
    std::fs::File::create(&file)?.set_len(DOWNLOAD_BYTES)?;
    let server = FileServer::start(file)?;
    let url = format!("http://bench.localhost:{}/large", server.port);
    let mut rows = Vec::new();
    for link in &LINKS {
        let command = format!("curl -sS{} -o /dev/null -w '%{{speed_download}}' {url}", link.curl_options);
        let (mut plain, mut proxied) = (Vec::new(), Vec::new());
        for _ in 0..link.downloads {
            plain.push(download(PreparedCommand::unconfined(&command), cwd, &server).await?);
            let proxy = NetworkProxy::start(policy.clone(), Arc::new(NoOneToAsk))?;
            proxied.push(download(sandbox.confine(&command, Some(&proxy))?, cwd, &server).await?);
        }
        rows.extend(rate_rows(link.label, &plain, &proxied));
        if link.curl_options.is_empty() {
            rows.extend(cpu_rows(&plain, &proxied));
        }
    }
    Ok(rows)
}

async fn download(prepared: PreparedCommand, cwd: &Path, server: &FileServer) -> anyhow::Result<Download> {
    let cpu = || (cpu_used(libc::RUSAGE_SELF), server.cpu_spent(), cpu_used(libc::RUSAGE_CHILDREN));
    let (bench_before, server_before, command_before) = cpu();
    let answers = server.answers();
    let started = Instant::now();
    let printed = crate::network::run(prepared, cwd).await?;
    let elapsed = started.elapsed();
    server.answered_beyond(answers).await;
    let (bench_after, server_after, command_after) = cpu();
    let in_server = server_after.saturating_sub(server_before);
    Ok(Download {
        rate: transfer_rate(&printed)?,
        elapsed,
        in_server,
        in_proxy: bench_after.saturating_sub(bench_before).saturating_sub(in_server),
        in_command: command_after.saturating_sub(command_before),
    })
}

fn rate_rows(label: &str, plain: &[Download], proxied: &[Download]) -> Vec<Row> {
    let (through_proxy, outside) = (median_rate(proxied), median_rate(plain));
    vec![
        duration_row(&format!("curl 256 MiB{label} from a local server, plain"), &elapsed(plain), "(reference)"),
        duration_row(
            &format!("curl 256 MiB{label}, sandboxed through the proxy (with the sandbox's start)"),
            &elapsed(proxied),
            "(see ratio)",
        ),
        Row::single(
            format!("proxy throughput / plain throughput{label} (curl's transfer rate)"),
            format!("{:.2} ({through_proxy:.0} vs {outside:.0} MiB/s)", through_proxy / outside),
            ">= 0.8",
        ),
    ]
}

/// CPU per GiB moved, by party, and the ratio two cores allow with those costs.
fn cpu_rows(plain: &[Download], proxied: &[Download]) -> Vec<Row> {
    let per_gib = |downloads: &[Download], part: fn(&Download) -> Duration| {
        let gib = DOWNLOAD_BYTES as f64 / f64::from(1u32 << 30);
        median(&downloads.iter().map(part).collect::<Vec<_>>()).as_secs_f64() * 1000.0 / gib
    };
    let server = per_gib(plain, |download| download.in_server);
    let server_proxied = per_gib(proxied, |download| download.in_server);
    let curl_plain = per_gib(plain, |download| download.in_command);
    let curl_sandboxed = per_gib(proxied, |download| download.in_command);
    let relay = per_gib(proxied, |download| download.in_proxy);
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    let bound = fastest_pipeline(&[server, curl_plain], cores)
        / fastest_pipeline(&[server_proxied, relay, curl_sandboxed], cores);
    let ms = |value: f64| format!("{value:.0} ms");
    vec![
        Row::single("CPU per GiB: the file server (sendfile), plain", ms(server), "(reference)"),
        Row::single("CPU per GiB: the file server, through the proxy", ms(server_proxied), "(reference)"),
        Row::single("CPU per GiB: curl, plain", ms(curl_plain), "(reference)"),
        Row::single("CPU per GiB: curl, sandboxed (with the sandbox's start)", ms(curl_sandboxed), "(reference)"),
        Row::single("CPU per GiB: the proxy's relay", ms(relay), "<= the server's"),
        Row::single(
            format!("ratio {cores} cores allow at best with these costs"),
            format!("{bound:.2}"),
            "(bounds the ratio above)",
        ),
    ]
}

/// The time per GiB of parties working at once on `cores` cores, each on one core at most:
/// the slowest party, or the whole work shared by the cores, whichever is longer.
fn fastest_pipeline(costs: &[f64], cores: f64) -> f64 {
    let slowest = costs.iter().copied().fold(0.0, f64::max);
    slowest.max(costs.iter().sum::<f64>() / cores)
}

fn median_rate(downloads: &[Download]) -> f64 {
    median_of(&downloads.iter().map(|download| download.rate).collect::<Vec<_>>())
}

fn elapsed(downloads: &[Download]) -> Vec<Duration> {
    downloads.iter().map(|download| download.elapsed).collect()
}

/// The transfer rate `curl -w '%{speed_download}'` printed, in MiB/s: the body's bytes over the
/// time from the request to its last byte, so a sandbox's start is not counted as throughput.
fn transfer_rate(printed: &str) -> anyhow::Result<f64> {
    let bytes_per_second: f64 =
        printed.trim().parse().map_err(|_| anyhow::anyhow!("curl printed no rate: {printed:?}"))?;
    Ok(bytes_per_second / f64::from(1u32 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipeline_is_bound_by_its_slowest_party_or_by_the_cores() {
        assert_eq!(fastest_pipeline(&[3.0, 2.0], 2.0), 3.0);
        assert_eq!(fastest_pipeline(&[2.0, 2.0, 2.0], 2.0), 3.0);
        assert_eq!(fastest_pipeline(&[2.0, 2.0, 2.0], 4.0), 2.0);
    }

    #[test]
    fn curls_rate_is_read_in_mib_per_second() {
        assert_eq!(transfer_rate("2097152.000\n").unwrap(), 2.0);
        assert!(transfer_rate("").is_err());
    }
}
