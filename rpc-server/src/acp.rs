//! `larik acp`: the Agent Client Protocol v1 over stdio.

mod agent;
mod checkpoints;
mod commands;
pub mod connection;
mod editor_context;
mod editor_diagnostics;
mod editor_files;
mod elicitation;
mod forward;
mod from_proto;
mod lifecycle;
mod modes;
mod output_queue;
mod permission;
mod slash;
mod terminals;
mod to_proto;

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::sync::Arc;

pub use agent::AcpAgent;

/// Serves ACP on stdin/stdout until stdin closes; then cancels what runs and returns.
pub async fn serve_stdio(env: HashMap<String, String>) -> anyhow::Result<()> {
    let agent = Arc::new(AcpAgent::new(env));
    agent.remove_expired_sessions();
    let input = tokio::io::BufReader::new(stdin());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    // An SSH connection with a terminal that drops sends SIGHUP before the input ends.
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    let stopped = async {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = hangup.recv() => {}
        }
    };
    tokio::select! {
        () = connection::run(input, stdout(), Arc::clone(&agent)) => {}
        // Killed politely or hung up: what runs is cancelled and its process groups killed, as on
        // end of input.
        () = stopped => {
            agent.shutdown().await;
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    // Sessions end with the connection: their background shells die with them.
    agent.shutdown().await;
    Ok(())
}

/// Standard input, read by the runtime's own event loop when it is a pipe (as editors start
/// agents); anything else is read through tokio's blocking reader.
fn stdin() -> Box<dyn tokio::io::AsyncRead + Unpin + Send> {
    let pipe = duplicate(std::io::stdin()).and_then(tokio::net::unix::pipe::Receiver::from_file);
    match pipe {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    }
}

/// Standard output, written by the event loop when it is a pipe: no hand-off to a blocking
/// thread per write, which dominated the cost of relaying a fast stream.
fn stdout() -> Box<dyn tokio::io::AsyncWrite + Unpin + Send> {
    let pipe = duplicate(std::io::stdout()).and_then(tokio::net::unix::pipe::Sender::from_file);
    match pipe {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    }
}

/// A file of our own on a standard stream's open file, to hand to the event loop.
fn duplicate(stream: impl AsFd) -> std::io::Result<std::fs::File> {
    stream.as_fd().try_clone_to_owned().map(std::fs::File::from)
}
