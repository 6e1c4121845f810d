#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Claude Code's MCP timeouts, set where its users set them (`env` in `~/.claude/settings.json`),
//! over ACP with the real binary and real servers: `MCP_TIMEOUT` bounds a server's connection
//! attempt, `MCP_TOOL_TIMEOUT` a tool call; a value that is not a number is told, not used.

use larik_tests::harness::{Agent, Sandbox, notice_titles};
use larik_tests::mcp_servers::{everything_from_the_editor, everything_starting_at, session_with};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use larik_tests::tasks::{result_of, result_text};
use serde_json::{Value, json};

fn write_claude_settings(sandbox: &Sandbox, settings: &Value) {
    let dir = sandbox.home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), serde_json::to_string_pretty(settings).unwrap()).unwrap();
}

/// An agent showing notices, whose model asks for one `trigger-long-running-operation` call
/// (`t1`) of `seconds` on server-everything, in a session with the editor's `servers`.
async fn one_long_call(sandbox: &Sandbox, seconds: u64, servers: Value) -> (MockLlm, Agent, String) {
    let steps = vec![
        Step::tool("t1", "mcp__everything__trigger-long-running-operation", json!({"duration": seconds, "steps": 2})),
        Step::text("done"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"session": {"notices": {}}})).await;
    let session = session_with(&mut agent, sandbox, servers).await;
    (mock, agent, session)
}

#[tokio::test]
async fn the_users_mcp_timeouts_bound_a_server_that_never_starts_and_a_call_that_runs_long() {
    let sandbox = Sandbox::new();
    // Well under the 30 s a connection attempt has by default and the 10 s the first prompt
    // waits for servers still connecting, so the attempt is seen to end on the user's timeout.
    write_claude_settings(&sandbox, &json!({"env": {"MCP_TIMEOUT": "5000", "MCP_TOOL_TIMEOUT": "1500"}}));
    let (started, gate) = (sandbox.home.path().join("started"), sandbox.home.path().join("never"));
    let servers = json!([everything_starting_at("stuck", &started, &gate), everything_from_the_editor()]);
    let (mock, mut agent, session) = one_long_call(&sandbox, 20, servers).await;

    let (response, updates) = agent.prompt(&session, "wait", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(
        notice_titles(&updates)
            .contains("The MCP server `stuck` could not connect: no answer within 5 s (MCP_TIMEOUT sets how long)"),
        "the attempt ended on MCP_TIMEOUT: {}",
        notice_titles(&updates)
    );
    let result = result_of(mock.requests().last().unwrap(), "t1");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result_text(&result)
            .contains("the MCP server `everything` did not answer within 1.5 s (MCP_TOOL_TIMEOUT sets how long)"),
        "the call ended on MCP_TOOL_TIMEOUT, not after its 20 s: {result}"
    );
}

#[tokio::test]
async fn an_mcp_timeout_that_is_not_a_number_is_told_and_the_default_kept() {
    let sandbox = Sandbox::new();
    write_claude_settings(&sandbox, &json!({"env": {"MCP_TOOL_TIMEOUT": "two minutes"}}));
    let (mock, mut agent, session) = one_long_call(&sandbox, 1, json!([everything_from_the_editor()])).await;

    let (_, updates) = agent.prompt(&session, "wait", |_| "allow_once").await;
    assert!(
        notice_titles(&updates)
            .contains("MCP_TOOL_TIMEOUT=two minutes is not a number of milliseconds above 0; it is not used"),
        "{}",
        notice_titles(&updates)
    );
    let result = result_of(mock.requests().last().unwrap(), "t1");
    assert_ne!(result["is_error"], true, "the call ran to its end: {result}");
}
