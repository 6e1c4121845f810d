//! `larik mcp list` and `larik mcp get <name>`: the MCP servers the project in the current
//! directory would use and where each is, for scripts and bug reports. The servers are really
//! connected (the project's own only if the user approved them in an editor before).

use std::collections::HashMap;
use std::io::Write;

use larik_core::session::{Session, SessionConfig};
use tokio_util::sync::CancellationToken;

/// Prints the report; `only` keeps one server. The exit code is 1 when `only` names no server.
pub async fn run(only: Option<&str>, env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let (config, _) = SessionConfig::from_settings(cwd, env, std::env::current_exe().ok())?;
    let cancel = CancellationToken::new();
    let session = Session::new(config, &cancel);
    let report = session.mcp_report().await;
    let lines: Vec<&str> = match only {
        Some(name) => report.lines().filter(|line| line.contains(&format!("MCP server `{name}`"))).collect(),
        None => report.lines().collect(),
    };
    cancel.cancel();
    let mut stdout = std::io::stdout().lock();
    if lines.is_empty() {
        writeln!(stdout, "No MCP server is named `{}`.", only.unwrap_or_default())?;
        return Ok(1);
    }
    for line in lines {
        writeln!(stdout, "{line}")?;
    }
    stdout.flush()?;
    Ok(0)
}
