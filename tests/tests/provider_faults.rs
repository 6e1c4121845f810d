#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A model that goes silent is reported, never waited on forever: a stream that stalls with the
//! connection open after some output, and a server that accepts the request and never answers,
//! both end the prompt with a `stream_stalled` model error after the stream idle timeout
//! (`streamIdleTimeoutMs`, short here); the second is retried first, with notices.

use larik_tests::harness::{Agent, Sandbox, message_text};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

fn short_idle_timeout(sandbox: &Sandbox) {
    let path = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, json!({"streamIdleTimeoutMs": 1000}).to_string()).unwrap();
}

#[tokio::test]
async fn a_stream_that_stalls_after_output_is_reported_as_stalled() {
    let sandbox = Sandbox::new();
    short_idle_timeout(&sandbox);
    let mut step = Step::text("The answer starts");
    step.hang = true;
    let mock = MockLlm::start(Scenario { responses: vec![step] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, updates) = agent.prompt(&session, "go", |_| "allow_once").await;
    assert_eq!(response["error"]["data"]["kind"], "stream_stalled", "{response}");
    assert!(response["error"]["message"].as_str().unwrap().contains("stream idle timeout"), "{response}");
    assert!(message_text(&updates).contains("The answer starts"), "what came is shown");
    assert_eq!(mock.requests().len(), 1, "output was shown: no retry");
    // The session goes on.
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_is_retried_then_reported() {
    let sandbox = Sandbox::new();
    short_idle_timeout(&sandbox);
    // Accepts every connection, reads the request, says nothing.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&accepted);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(socket);
        }
    });
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(&url));
    agent.initialize_with(json!({"session": {"notices": {}}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, updates) = agent.prompt(&session, "go", |_| "allow_once").await;
    assert_eq!(response["error"]["data"]["kind"], "stream_stalled", "{response}");
    let retries = updates.iter().filter(|update| update["sessionUpdate"] == "notice" && update.to_string().contains("retrying")).count();
    assert!(retries >= 1, "{updates:?}");
    assert!(accepted.load(std::sync::atomic::Ordering::SeqCst) >= 2, "the request was tried again");
}
