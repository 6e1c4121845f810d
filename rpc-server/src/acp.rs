//! `larik acp`: the Agent Client Protocol v1 over stdio.

mod agent;
mod commands;
pub mod connection;
mod editor_context;
mod editor_files;
mod elicitation;
mod forward;
mod from_proto;
mod lifecycle;
mod modes;
mod permission;
mod terminals;
mod to_proto;

use std::collections::HashMap;
use std::sync::Arc;

pub use agent::AcpAgent;

/// Serves ACP on stdin/stdout until stdin closes; then cancels what runs and returns.
pub async fn serve_stdio(env: HashMap<String, String>) -> anyhow::Result<()> {
    let agent = Arc::new(AcpAgent::new(env));
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        () = connection::run(input, tokio::io::stdout(), Arc::clone(&agent)) => {}
        // Killed politely: what runs is cancelled and its process groups killed, as on end of input.
        _ = terminate.recv() => {
            agent.shutdown();
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    // Sessions end with the connection: their background shells die with them.
    agent.shutdown();
    Ok(())
}
