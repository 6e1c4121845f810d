#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The wire itself: bad input of every kind gets its JSON-RPC error and the server stays up;
//! closing stdin ends the process cleanly; model failures reach the editor with the right code.

use larik_tests::harness::{Agent, Sandbox, message_text};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

#[tokio::test]
async fn malformed_input_gets_errors_and_the_server_stays_up() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.base_env());
    agent.initialize().await;

    agent.send_raw("{\"jsonrpc\":\"2.0\",\"id\":\n").await;
    let parse = agent.next().await;
    assert_eq!(parse["error"]["code"], -32700);
    assert!(parse["id"].is_null());

    agent.send_raw("[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\"}]\r\n\r\n\n").await;
    let batch = agent.next().await;
    assert_eq!(batch["error"]["code"], -32600);

    let unknown = agent.request("session/teleport", json!({})).await;
    let (reply, _) = agent.response(unknown).await;
    assert_eq!(reply["error"]["code"], -32601);

    agent.notify("_unknown/notification", json!({})).await;

    let bad = agent.request("session/new", json!({"mcpServers": []})).await;
    let (reply, _) = agent.response(bad).await;
    assert_eq!(reply["error"]["code"], -32602);
    assert!(reply["error"]["message"].as_str().unwrap().contains("cwd"), "{reply}");

    let wrong_type = agent.request("session/prompt", json!({"sessionId": "s", "prompt": "not a list"})).await;
    let (reply, _) = agent.response(wrong_type).await;
    assert_eq!(reply["error"]["code"], -32602);
    assert!(reply["error"]["message"].as_str().unwrap().contains("prompt"), "{reply}");

    let missing_session = agent.request("session/prompt", json!({"sessionId": "nope", "prompt": []})).await;
    let (reply, _) = agent.response(missing_session).await;
    assert_eq!(reply["error"]["code"], -32002);

    let relative = agent.request("session/new", json!({"cwd": "relative/dir", "mcpServers": []})).await;
    let (reply, _) = agent.response(relative).await;
    assert_eq!(reply["error"]["code"], -32602);

    // Still serving after all of it.
    let result = agent.initialize().await;
    assert_eq!(result["protocolVersion"], 1);
    assert_eq!(result["agentInfo"]["name"], "larik");
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
}

/// An agent in the middle of a bash command that would leave a marker file after 3 s.
async fn agent_running_a_command() -> (Sandbox, MockLlm, Agent, std::path::PathBuf) {
    let sandbox = Sandbox::new();
    let marker = sandbox.project_path().join("survived");
    let command = format!("sleep 3; touch {}", marker.display());
    let mock = MockLlm::start(Scenario { responses: vec![Step::tool("toolu_b", "bash", json!({"command": command}))] })
        .await
        .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "run"}]})).await;
    agent.until_tool_runs().await;
    (sandbox, mock, agent, marker)
}

#[tokio::test]
async fn closing_stdin_cancels_running_work_and_exits_zero() {
    let (_sandbox, _mock, mut agent, marker) = agent_running_a_command().await;
    agent.close_stdin();
    let status = agent.wait_exit().await;
    assert!(status.success(), "{status:?}");
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    assert!(!marker.exists(), "the running command died with the agent");
}

#[tokio::test]
async fn initialize_negotiates_version_one() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.base_env());
    let id = agent
        .request("initialize", json!({"protocolVersion": 7, "clientCapabilities": {"fs": {"readTextFile": true}}}))
        .await;
    let (reply, _) = agent.response(id).await;
    assert_eq!(reply["result"]["protocolVersion"], 1);
    let capabilities = &reply["result"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true, "sessions are kept under the data directory");
    assert!(capabilities["sessionCapabilities"]["resume"].is_object());
    assert_eq!(capabilities["mcpCapabilities"], json!({"http": true, "sse": true}), "only what works is advertised");
    let bad = agent.request("initialize", json!({"protocolVersion": "1"})).await;
    let (reply, _) = agent.response(bad).await;
    assert_eq!(reply["error"]["code"], -32602);
}

#[tokio::test]
async fn missing_credentials_answer_auth_required() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.base_env());
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}))
        .await;
    let (reply, _) = agent.response(id).await;
    assert_eq!(reply["error"]["code"], -32000);
    assert!(reply["error"]["message"].as_str().unwrap().contains("ANTHROPIC_API_KEY"), "{reply}");
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_requested_delay() {
    let mut limited = Step::http_error(429);
    limited.headers.insert("retry-after".into(), "0.2".into());
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![limited, Step::text("after the wait")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, updates) = agent.prompt(&session, "hi", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    // A client without notice support sees the retry set apart in the text.
    let text = message_text(&updates);
    assert!(text.contains("rate limited") && text.contains("retrying in 0.2 s"), "{text}");
    assert!(text.ends_with("after the wait"), "{text}");
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn a_bad_request_is_an_error_not_an_empty_turn() {
    let mut bad = Step::http_error(400);
    bad.body = Some(
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages: field required"}})
            .to_string(),
    );
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![bad] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}))
        .await;
    let (reply, _) = agent.response(id).await;
    assert_eq!(reply["error"]["code"], -32603);
    assert_eq!(reply["error"]["data"]["kind"], "bad_request");
    assert!(reply["error"]["message"].as_str().unwrap().contains("messages: field required"));
    assert_eq!(mock.requests().len(), 1, "a bad request is not retried");
}

#[tokio::test]
async fn the_openai_wire_format_runs_a_tool_turn() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("data.txt"), "forty-two\n").unwrap();
    let steps = vec![Step::tool("call_1", "read", json!({"path": "data.txt"})), Step::text("It says forty-two.")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.openai_env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, updates) = agent.prompt(&session, "what does data.txt say?", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(message_text(&updates), "It says forty-two.");
    let requests = mock.requests();
    assert_eq!(requests[0]["model"], "gpt-mock");
    assert_eq!(requests[0]["messages"][0]["role"], "system");
    assert_eq!(requests[0]["tools"][0]["type"], "function");
    let tool_message = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("tool message")
        .clone();
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert!(tool_message["content"].as_str().unwrap().contains("forty-two"));
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_reported_not_truncated() {
    let mut cut = Step::text("The answer starts but never");
    cut.cut = true;
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![cut] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}))
        .await;
    let (reply, seen) = agent.response(id).await;
    assert!(!seen.is_empty(), "the partial text was streamed");
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert_eq!(reply["error"]["data"]["kind"], "stream_broken");
    assert_eq!(mock.requests().len(), 1, "output already shown is not silently replayed");
}

#[tokio::test]
async fn closing_stdin_ends_the_process_even_with_sessions_that_use_the_editors_files() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.base_env());
    agent.initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}})).await;
    agent.new_session(&sandbox.project_path()).await;
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
}

#[tokio::test]
async fn sigterm_ends_running_commands_too() {
    let (_sandbox, _mock, mut agent, marker) = agent_running_a_command().await;
    let pid = agent.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    agent.wait_exit().await;
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    assert!(!marker.exists(), "the command died with the agent");
}
