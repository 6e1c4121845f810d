//! Repeated measurements and the table they are printed in.

use std::time::{Duration, Instant};

/// One line of the results table.
pub struct Row {
    pub name: String,
    pub median: String,
    pub min: String,
    pub max: String,
    pub target: String,
}

impl Row {
    /// A figure measured once: no spread to show.
    pub fn single(name: impl Into<String>, value: impl Into<String>, target: impl Into<String>) -> Self {
        Self { name: name.into(), median: value.into(), min: String::new(), max: String::new(), target: target.into() }
    }
}

/// Times `runs` calls of `work` after one warm-up call.
pub async fn time_async<F, Fut>(runs: usize, mut work: F) -> anyhow::Result<Vec<Duration>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    work().await?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        work().await?;
        times.push(started.elapsed());
    }
    Ok(times)
}

pub fn time_command(runs: usize, program: &str, args: &[&str], cwd: &std::path::Path) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(runs);
    for index in 0..=runs {
        let started = Instant::now();
        let status = std::process::Command::new(program)
            .args(args)
            .current_dir(cwd)
            .stdout(std::process::Stdio::null())
            .status()?;
        anyhow::ensure!(status.success() || status.code() == Some(1), "{program} failed: {status}");
        if index > 0 {
            times.push(started.elapsed());
        }
    }
    Ok(times)
}

pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

/// The middle value of plain numbers (the upper middle of an even count).
pub fn median_of(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

pub fn millis(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

pub fn duration_row(name: &str, times: &[Duration], target: &str) -> Row {
    Row {
        name: name.to_owned(),
        median: millis(median(times)),
        min: millis(times.iter().min().copied().unwrap_or_default()),
        max: millis(times.iter().max().copied().unwrap_or_default()),
        target: target.to_owned(),
    }
}

pub fn print(rows: &[Row]) {
    println!("| figure | median | min | max | target |");
    println!("|---|---|---|---|---|");
    for row in rows {
        println!("| {} | {} | {} | {} | {} |", row.name, row.median, row.min, row.max, row.target);
    }
}
