//! The real MCP servers the tests connect Larik to (`@modelcontextprotocol/server-everything`,
//! `server-filesystem`, installed by `scripts/setup.sh` into `tests/mcp/node_modules`), and a
//! session that has them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Agent, Sandbox};

pub fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/node_modules/@modelcontextprotocol")
}

/// The path of server-everything's script.
pub fn everything() -> String {
    let script = servers_dir().join("server-everything/dist/index.js");
    assert!(script.exists(), "{} is missing: run scripts/setup.sh", script.display());
    script.display().to_string()
}

pub fn node() -> String {
    let output = std::process::Command::new("bash").args(["-c", "command -v node"]).output().unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// server-everything over stdio as an editor passes it in `session/new`, named `everything`.
pub fn everything_from_the_editor() -> Value {
    json!({"name": "everything", "command": node(), "args": [everything(), "stdio"], "env": []})
}

/// server-everything over stdio, started slowly: the command runs at once and leaves `started`,
/// but the server itself only starts once `gate` exists, so it is not ready before the test says.
/// Its definition as an editor passes it in `session/new`, named `name`.
pub fn everything_starting_at(name: &str, started: &Path, gate: &Path) -> Value {
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done; exec '{}' '{}' stdio",
        started.display(),
        gate.display(),
        node(),
        everything()
    );
    json!({"name": name, "command": "sh", "args": ["-c", script], "env": []})
}

/// Opens a session with the editor's `servers` (its `session/new` answer is awaited, nothing
/// after it).
pub async fn session_with(agent: &mut Agent, sandbox: &Sandbox, servers: Value) -> String {
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": servers})).await;
    let (response, _) = agent.response(id).await;
    response["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{response}")).to_owned()
}
