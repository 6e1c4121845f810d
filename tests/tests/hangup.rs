#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A dropped connection that hangs up (an SSH session with a terminal sends SIGHUP before its
//! input ends): the agent cancels the turn, ends every process the turn started, keeps the
//! session on disk and exits; a new agent loads the session with the interrupted call failed.

use std::time::{Duration, Instant};

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

/// Whether a process with `marker` in its command line runs.
fn running(marker: &str) -> bool {
    std::process::Command::new("pgrep").args(["-f", marker]).output().unwrap().status.success()
}

#[tokio::test]
async fn a_hangup_mid_turn_ends_the_command_keeps_the_session_and_exits() {
    let sandbox = Sandbox::new();
    let marker = format!("sleep 30.{}", std::process::id());
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("t0", "bash", json!({"command": format!("exec {marker}")})), Step::text("never")],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let session = agent.response(id).await.0["result"]["sessionId"].as_str().unwrap().to_owned();
    agent.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]})).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !running(&marker) {
        assert!(Instant::now() < deadline, "the command never started");
        let message = tokio::time::timeout(Duration::from_millis(200), agent.next()).await;
        if let Ok(message) = message {
            assert_ne!(message["method"], "session/request_permission", "sandboxed bash does not ask: {message}");
        }
    }

    let pid = nix::unistd::Pid::from_raw(i32::try_from(agent.child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let status = agent.wait_exit().await;
    assert!(status.success(), "the agent ended in order on SIGHUP: {status:?}");
    let gone = Instant::now() + Duration::from_secs(2);
    while running(&marker) && Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!running(&marker), "the command did not outlive the agent");

    let mut again = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    again.initialize().await;
    let id = again
        .request("session/load", json!({"sessionId": session, "cwd": sandbox.project_path(), "mcpServers": []}))
        .await;
    let (loaded, replayed) = again.response(id).await;
    assert!(loaded["result"].is_object(), "{loaded}");
    let updates: Vec<Value> = replayed.iter().map(|message| message["params"]["update"].clone()).collect();
    assert!(
        updates
            .iter()
            .any(|update| update["sessionUpdate"] == "user_message_chunk" && update["content"]["text"] == "wait"),
        "{updates:?}"
    );
    let call = updates.iter().find(|update| update["sessionUpdate"] == "tool_call").expect("the bash call replayed");
    assert_eq!(call["status"], "failed", "the interrupted call: {call}");
}
