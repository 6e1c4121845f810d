//! `larik-mock-llm --scenario FILE [--port N]`: the mock model server as a process, for editor
//! tests. Prints `{"url": "http://127.0.0.1:PORT"}` on one line once it listens, then serves until
//! killed.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use larik_tests::mock_llm::{MockLlm, Scenario};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    scenario: PathBuf,
    #[arg(long, default_value_t = 0)]
    port: u16,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let scenario: Scenario = serde_json::from_str(&std::fs::read_to_string(&args.scenario)?)?;
    let mock = MockLlm::start_on(scenario, args.port).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", serde_json::json!({"url": mock.url()}))?;
    stdout.flush()?;
    // Serve until killed.
    std::future::pending::<()>().await;
    Ok(())
}
