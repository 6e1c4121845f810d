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
    let retries = updates
        .iter()
        .filter(|update| update["sessionUpdate"] == "notice" && update.to_string().contains("retrying"))
        .count();
    assert!(retries >= 1, "{updates:?}");
    assert!(accepted.load(std::sync::atomic::Ordering::SeqCst) >= 2, "the request was tried again");
}

/// A model endpoint written by hand: reads one request, answers with `head` (status line and
/// headers) and `body`, then closes the connection, with a reset (`SO_LINGER` 0) if `reset`.
async fn serve_once(
    head: &'static str,
    body: String,
    reset: bool,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&served);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // The request's head and body arrive together for a small request; read what came.
            let mut request = vec![0; 1 << 16];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
            let _ = socket.flush().await;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            if reset {
                // A zero linger makes the drop send a reset at once; it is a long linger that blocks.
                #[allow(deprecated, reason = "the reset is what the test needs, and a zero linger does not block")]
                let _ = socket.set_linger(Some(std::time::Duration::ZERO));
            }
            drop(socket);
        }
    });
    (url, served)
}

const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

/// Anthropic's opening events and one text delta.
fn anthropic_start(text: &str) -> String {
    let start = json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "claude-mock", "usage": {"input_tokens": 5, "output_tokens": 1}}});
    let block = json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}});
    let delta = json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}});
    format!(
        "event: message_start\ndata: {start}\n\nevent: content_block_start\ndata: {block}\n\nevent: content_block_delta\ndata: {delta}\n\n"
    )
}

async fn prompt_against(url: &str) -> (serde_json::Value, Vec<serde_json::Value>) {
    let sandbox = Sandbox::new();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(url));
    agent.initialize_with(json!({"session": {"notices": {}}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let outcome = agent.prompt(&session, "go", |_| "allow_once").await;
    // The agent is still up and answers.
    let id = agent.request("session/list", json!({})).await;
    let (listed, _) = agent.response(id).await;
    assert!(listed.get("result").is_some(), "the agent stays up: {listed}");
    outcome
}

#[tokio::test]
async fn a_connection_reset_mid_stream_is_reported_with_the_text_kept() {
    let (url, served) = serve_once(SSE_HEAD, anthropic_start("Half an answer"), true).await;
    let (response, updates) = prompt_against(&url).await;
    assert!(response.get("error").is_some(), "never a silent end_turn: {response}");
    assert!(matches!(response["error"]["data"]["kind"].as_str(), Some("stream_broken" | "network")), "{response}");
    assert!(message_text(&updates).contains("Half an answer"));
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1, "output was shown: no retry");
}

#[tokio::test]
async fn a_malformed_frame_mid_stream_is_reported() {
    let body = format!(
        "{}event: content_block_delta\ndata: {{\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {{\"type\": \"text_de\n\n",
        anthropic_start("Before the bad frame")
    );
    let (url, _) = serve_once(SSE_HEAD, body, false).await;
    let (response, updates) = prompt_against(&url).await;
    assert_eq!(response["error"]["data"]["kind"], "stream_broken", "{response}");
    assert!(message_text(&updates).contains("Before the bad frame"));
}

#[tokio::test]
async fn an_error_after_partial_output_is_reported_not_a_silent_end_turn() {
    // What a 5xx looks like once the stream has begun: Anthropic's `error` event.
    let error = json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}});
    let body = format!("{}event: error\ndata: {error}\n\n", anthropic_start("Partial"));
    let (url, _) = serve_once(SSE_HEAD, body, false).await;
    let (response, updates) = prompt_against(&url).await;
    assert!(response.get("error").is_some(), "{response}");
    assert!(response["error"]["message"].as_str().unwrap().contains("Internal server error"), "{response}");
    assert!(message_text(&updates).contains("Partial"));
}

#[tokio::test]
async fn a_5xx_before_any_output_is_retried_with_notices_then_reported() {
    let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
    let body = json!({"type": "error", "error": {"type": "api_error", "message": "upstream failed"}}).to_string();
    let (url, served) = serve_once(head, body, false).await;
    let (response, updates) = prompt_against(&url).await;
    assert!(response["error"]["message"].as_str().unwrap().contains("upstream failed"), "{response}");
    let notices: Vec<_> = updates.iter().filter(|update| update["sessionUpdate"] == "notice").collect();
    assert!(notices.iter().any(|notice| notice.to_string().contains("retrying")), "retries are notices: {updates:?}");
    assert!(!message_text(&updates).contains("retrying"), "never inside the assistant's text");
    assert!(served.load(std::sync::atomic::Ordering::SeqCst) >= 2);
}
