//! `larik mcp list`, `larik mcp get <name>` and `larik mcp login <name>`: the MCP servers the
//! project in the current directory would use and where each is, for scripts and bug reports,
//! and logging in to one that asks for OAuth. The servers are really connected (the project's own
//! only if the user approved them in an editor before).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use larik_core::session::{Session, SessionConfig};
use tokio_util::sync::CancellationToken;

/// Opens a login page from the terminal: the user's `$BROWSER`, else `xdg-open`, with the address
/// printed in case neither opens it.
struct TerminalBrowser {
    opener: Option<String>,
}

#[async_trait::async_trait]
impl larik_core::services::LoginBrowser for TerminalBrowser {
    async fn open(&self, server: &str, url: &str) -> Result<(), larik_core::services::EditorError> {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(
            stdout,
            "To log in to the MCP server `{server}`, open:\n\n  {url}\n\nWaiting for the login to finish (5 minutes at most)..."
        );
        let _ = stdout.flush();
        if let Some(opener) = &self.opener {
            // Its output is not ours: a browser's chatter stays out of the terminal.
            let started = tokio::process::Command::new(opener)
                .arg(url)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            if let Err(error) = started {
                tracing::info!(%error, opener, "could not start the browser");
            }
        }
        Ok(())
    }
}

/// Logs in to `name`, then reports where it is. The exit code is 1 when the login failed.
pub async fn login(name: &str, env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let (mut config, _) = SessionConfig::from_settings(cwd, env, std::env::current_exe().ok())?;
    let opener = env.get("BROWSER").filter(|browser| !browser.is_empty()).cloned().or_else(|| Some("xdg-open".into()));
    config.services.browser = Some(Arc::new(TerminalBrowser { opener }));
    let cancel = CancellationToken::new();
    let session = Session::new(config, &cancel);
    // Settled first: a server that asked for a login said how (its challenge) before this starts.
    session.mcp_servers().await;
    let result = session.mcp_login(name, &cancel).await;
    let report = session.mcp_servers().await;
    cancel.cancel();
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = result {
        writeln!(stdout, "{error}")?;
        return Ok(1);
    }
    writeln!(stdout, "{}", larik_core::commands::Reply::McpLoggedIn(name.to_owned()))?;
    if let Some(server) = report.server(name) {
        writeln!(stdout, "- {server}")?;
    }
    stdout.flush()?;
    Ok(0)
}

/// Prints the report; `only` keeps one server. The exit code is 1 when `only` names no server.
pub async fn run(only: Option<&str>, env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let (config, _) = SessionConfig::from_settings(cwd, env, std::env::current_exe().ok())?;
    let cancel = CancellationToken::new();
    let session = Session::new(config, &cancel);
    let report = session.mcp_servers().await;
    cancel.cancel();
    let mut stdout = std::io::stdout().lock();
    match only {
        None => writeln!(stdout, "{report}")?,
        Some(name) => match report.server(name) {
            Some(server) => writeln!(stdout, "- {server}")?,
            None => {
                writeln!(stdout, "{}", larik_core::McpError::NoSuchServer(name.to_owned()))?;
                return Ok(1);
            }
        },
    }
    stdout.flush()?;
    Ok(0)
}
