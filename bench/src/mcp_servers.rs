//! The real MCP servers the benchmarks configure (installed by `scripts/setup.sh` into
//! `tests/mcp/node_modules`): a user with server-everything and two more servers.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/node_modules/@modelcontextprotocol")
}

/// The Node on PATH, if any.
fn node() -> Option<String> {
    let output = std::process::Command::new("bash").args(["-c", "command -v node"]).output().ok()?;
    let node = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!node.is_empty()).then_some(node)
}

/// `mcpServers` for server-everything, server-filesystem (over `project`) and a second
/// server-everything; `None` when they are not installed.
pub fn three(project: &Path) -> Option<Value> {
    let everything = servers_dir().join("server-everything/dist/index.js");
    let filesystem = servers_dir().join("server-filesystem/dist/index.js");
    if !everything.exists() || !filesystem.exists() {
        return None;
    }
    let node = node()?;
    let mut servers = Map::new();
    servers.insert("everything".into(), json!({"command": node, "args": [everything, "stdio"]}));
    servers.insert("filesystem".into(), json!({"command": node, "args": [filesystem, project]}));
    servers.insert("everything2".into(), json!({"command": node, "args": [everything, "stdio"]}));
    Some(Value::Object(servers))
}
