#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Where Claude Code users keep MCP servers, over ACP with the real binary: `~/.claude.json`'s
//! `mcpServers` (the user's, everywhere) and its `projects` entry (the user's, for one project)
//! start without asking; an organisation's `managed-mcp.json` is then the only source, the
//! editor's servers included.

use std::path::{Path, PathBuf};

use larik_tests::harness::Sandbox;
use larik_tests::mock_llm::Step;
use larik_tests::turns::rejected_turn;
use serde_json::{Value, json};

/// A "server" that only leaves a mark that it was started.
fn marking(marker: &Path) -> Value {
    json!({"command": "sh", "args": ["-c", format!("touch {}; sleep 5", marker.display())]})
}

fn markers(sandbox: &Sandbox, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|name| sandbox.home.path().join(format!("started-{name}"))).collect()
}

/// Waits a little for servers that start in the background, then says which did.
async fn started(markers: &[PathBuf]) -> Vec<bool> {
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    markers.iter().map(|marker| marker.exists()).collect()
}

#[tokio::test]
async fn the_users_claude_json_servers_start_here_and_another_projects_do_not() {
    let sandbox = Sandbox::new();
    let [everywhere, here, elsewhere] = markers(&sandbox, &["everywhere", "here", "elsewhere"]).try_into().unwrap();
    let claude_json = json!({
        "numStartups": 42,
        "mcpServers": {"home-notes": marking(&everywhere)},
        "projects": {
            sandbox.project_path().display().to_string(): {"allowedTools": [], "mcpServers": {"local-db": marking(&here)}},
            "/somewhere/else": {"mcpServers": {"other": marking(&elsewhere)}}
        }
    });
    std::fs::write(sandbox.home.path().join(".claude.json"), claude_json.to_string()).unwrap();
    let turn = rejected_turn(&sandbox, &[], vec![Step::text("hi")]).await;
    assert!(turn.asked.is_empty(), "the user's own servers ask nothing: {:?}", turn.asked);
    assert_eq!(started(&[everywhere, here, elsewhere]).await, [true, true, false]);
}

#[tokio::test]
async fn an_organisations_managed_mcp_json_is_the_only_source_of_servers() {
    let sandbox = Sandbox::new();
    let [org, user, project] = markers(&sandbox, &["org", "user", "project"]).try_into().unwrap();
    let root = sandbox.home.path().join("etc");
    std::fs::create_dir_all(root.join("claude-code")).unwrap();
    std::fs::write(
        root.join("claude-code/managed-mcp.json"),
        json!({"mcpServers": {"org-tools": marking(&org)}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        sandbox.home.path().join(".claude.json"),
        json!({"mcpServers": {"mine": marking(&user)}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        sandbox.project.path().join(".mcp.json"),
        json!({"mcpServers": {"theirs": marking(&project)}}).to_string(),
    )
    .unwrap();
    let claude_dir = sandbox.home.path().join(".claude");
    std::fs::create_dir_all(&claude_dir).unwrap();
    std::fs::write(claude_dir.join("settings.json"), json!({"enableAllProjectMcpServers": true}).to_string()).unwrap();
    let env = [("LARIK_MANAGED_ROOT".to_owned(), root.display().to_string())];
    let turn = rejected_turn(&sandbox, &env, vec![Step::text("hi")]).await;
    assert!(turn.asked.is_empty(), "{:?}", turn.asked);
    assert_eq!(started(&[org, user, project]).await, [true, false, false]);
}
