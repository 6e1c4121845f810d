#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The API key never leaves the agent: with trace logging on, a turn with a tool call, an
//! `authenticate` call and a provider error leave no trace of the key (or the header carrying it)
//! in the log, the session files or anything the editor received; session files are 0600 and
//! their directories 0700.

use std::os::unix::fs::PermissionsExt;

use larik_tests::harness::{Agent, Sandbox, larik_bin, spawn_piped};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-api03-SECRET-4f2c9a7e1b8d";

/// Every file below `dir`, with its mode.
fn files_below(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u32)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            // A checkpoint store is git's own layout (read-only objects), kept private by the
            // directory it sits in.
            if entry.file_type().unwrap().is_dir() && entry.path().extension().is_none_or(|ext| ext != "git") {
                pending.push(entry.path());
            }
            found.push((entry.path(), mode));
        }
    }
    found
}

#[tokio::test]
async fn no_key_in_logs_session_files_or_editor_messages() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("a.txt"), "one\n").unwrap();
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::tool("toolu_r", "read", json!({"path": "a.txt"})),
            Step::text("It says one."),
            Step::http_error(400),
        ],
    })
    .await
    .unwrap();
    let log = sandbox.home.path().join("larik.log");
    let env: Vec<(String, String)> = sandbox
        .env(mock.url())
        .into_iter()
        .map(|(name, value)| match name.as_str() {
            "ANTHROPIC_API_KEY" => (name, KEY.to_owned()),
            "LARIK_LOG" => (name, "trace".to_owned()),
            _ => (name, value),
        })
        .collect();
    let mut command = tokio::process::Command::new(larik_bin());
    command.args(["acp", "--log-file"]).arg(&log);
    let child = spawn_piped(command, &sandbox.project_path(), &env);
    let mut agent = Agent::from_child(child);
    let mut seen: Vec<Value> = vec![agent.initialize().await];
    let session = agent.new_session(&sandbox.project_path()).await;
    let (done, updates) = agent.prompt(&session, "What does a.txt say?", |_| "allow_once").await;
    seen.push(done);
    seen.extend(updates);
    let (failed, updates) = agent.prompt(&session, "And again?", |_| "allow_once").await;
    assert!(failed["error"].is_object(), "the provider error is reported: {failed}");
    seen.push(failed);
    seen.extend(updates);
    let id = agent.request("authenticate", json!({"methodId": "api-key"})).await;
    let (authenticated, _) = agent.response(id).await;
    seen.push(authenticated);
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());

    // The key did reach the model, as a header: the test would prove nothing otherwise.
    assert!(mock.requests().len() >= 2);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("TRACE") || logged.contains("DEBUG"), "trace logging was on: {} bytes", logged.len());
    assert!(!logged.contains(KEY) && !logged.contains("SECRET-4f2c"), "the key is in the log");
    let to_editor = serde_json::to_string(&seen).unwrap();
    assert!(!to_editor.contains("SECRET-4f2c"), "the key reached the editor");
    let data = sandbox.home.path().join(".local/share/larik");
    let stored = files_below(&data);
    assert!(stored.iter().any(|(path, _)| path.extension().is_some_and(|ext| ext == "jsonl")), "{stored:?}");
    for (path, mode) in &stored {
        if path.extension().is_some_and(|ext| ext == "git") {
            continue;
        }
        if path.is_dir() {
            assert_eq!(*mode, 0o700, "{} is {mode:o}", path.display());
        } else {
            assert_eq!(*mode, 0o600, "{} is {mode:o}", path.display());
            let content = std::fs::read(path).unwrap();
            assert!(!String::from_utf8_lossy(&content).contains("SECRET-4f2c"), "the key is in {}", path.display());
        }
    }
}
