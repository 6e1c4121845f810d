#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A full disk, for real: the agent runs in a mount namespace of its own (`unshare`) where the
//! project and the data directory are small tmpfs mounts, the data directory filled to the
//! brim. A write that does not fit fails with a clear error and leaves the old file whole; the
//! session file cannot be written, which the editor hears once, and the session goes on in
//! memory; nothing panics.

use larik_tests::harness::{Agent, Sandbox, larik_bin, message_text, spawn_piped};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

const SCRIPT: &str = r#"set -e
mount -t tmpfs -o size=128k tmpfs "$PROJECT"
mkdir -p "$XDG_DATA_HOME"
mount -t tmpfs -o size=64k tmpfs "$XDG_DATA_HOME"
printf 'old content\n' > "$PROJECT/a.txt"
head -c 1000000 /dev/zero > "$XDG_DATA_HOME/filler" 2>/dev/null || true
cd "$PROJECT"
exec "$LARIK" acp
"#;

#[tokio::test]
async fn a_full_disk_fails_the_write_keeps_the_file_and_the_session_goes_on() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    let big = "x".repeat(400 * 1024);
    let steps = vec![
        Step::tool("toolu_r", "read", json!({"path": "a.txt"})),
        Step::tool("toolu_w", "write", json!({"path": "a.txt", "content": big})),
        Step::text("The disk is full."),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut env = sandbox.env(mock.url());
    env.push(("PROJECT".into(), project.display().to_string()));
    env.push(("LARIK".into(), larik_bin().display().to_string()));
    let mut unshare = tokio::process::Command::new("unshare");
    unshare.args(["--user", "--map-root-user", "--mount", "sh", "-c", SCRIPT]);
    let child = spawn_piped(unshare, &project, &env);
    // `unshare` and `sh` exec in turn: this is the agent's pid, and its root shows its mounts.
    let inside = std::path::PathBuf::from(format!("/proc/{}/root{}", child.id().unwrap(), project.display()));
    let mut agent = Agent::from_child(child);
    agent.initialize_with(json!({"session": {"notices": {}}})).await;
    let session = agent.new_session(&project).await;
    let (response, updates) = agent.prompt(&session, "rewrite a.txt", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    let failed: Vec<_> =
        updates.iter().filter(|update| update["toolCallId"] == "toolu_w" && update["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{updates:?}");
    assert!(failed[0].to_string().contains("No space left on device"), "a clear error: {}", failed[0]);
    assert_eq!(std::fs::read_to_string(inside.join("a.txt")).unwrap(), "old content\n", "the old file is whole");
    let left: Vec<String> = std::fs::read_dir(&inside)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["a.txt"], "no temp file of the failed write");

    let notices: Vec<String> =
        updates.iter().filter(|update| update["sessionUpdate"] == "notice").map(|update| update.to_string()).collect();
    let unsaved = notices.iter().filter(|notice| notice.contains("could not be saved")).count();
    assert_eq!(unsaved, 1, "told once: {notices:?}");
    assert!(message_text(&updates).contains("The disk is full."));
    // The conversation lives on in memory: the model saw the failed write.
    let last = mock.requests()[2].to_string();
    assert!(last.contains("No space left on device"), "{last}");
    // And the next prompt works.
    let (response, _) = agent.prompt(&session, "and now?", |_| "allow_once").await;
    assert!(
        response.get("result").is_some()
            || response["error"]["message"].as_str().unwrap().contains("mock scenario exhausted"),
        "{response}"
    );
    agent.close_stdin();
    assert!(agent.wait_exit().await.success(), "the agent ends cleanly");
}
