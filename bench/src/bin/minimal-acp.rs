//! The floor the footprint targets are measured against: a tokio binary that answers ACP's
//! `initialize` and `session/new` (and announces an empty command menu, as agents do) and does
//! nothing else. Its ready time and memory, taken in the same run as Larik's, make the targets
//! ratios that hold on a noisy machine.

#![allow(clippy::print_stdout)]

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn main() -> std::io::Result<()> {
    tokio::runtime::Builder::new_current_thread().enable_io().build()?.block_on(serve())
}

async fn serve() -> std::io::Result<()> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        let Ok(request) = serde_json::from_str::<Value>(&line) else { continue };
        let id = request["id"].clone();
        let mut out = Vec::new();
        match request["method"].as_str() {
            Some("initialize") => {
                out.push(
                    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
                );
            }
            Some("session/new") => {
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {"sessionId": "minimal"}}));
                out.push(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "minimal", "update": {"sessionUpdate": "available_commands_update", "availableCommands": []}}}));
            }
            _ => out.push(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "not here"}})),
        }
        for message in out {
            stdout.write_all(format!("{message}\n").as_bytes()).await?;
        }
        stdout.flush().await?;
    }
    Ok(())
}
