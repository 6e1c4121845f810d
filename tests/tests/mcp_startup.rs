#![allow(clippy::unwrap_used, clippy::expect_used)]
//! MCP servers at a session's start, over ACP with the real binary and real servers: a server
//! slow to start holds up neither the session nor the first prompt and joins when it is ready;
//! what the user is told of servers still connecting, failed, or waiting for approval (asked
//! again when a project's server changes, its OAuth settings included); a mention of a server
//! that is not connected stays prose.

use larik_tests::harness::{Agent, Sandbox, notice_titles};
use larik_tests::mcp_servers::{everything_starting_at, session_with};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use larik_tests::tasks::tool_names;
use serde_json::json;

/// The agent in the sandbox's project, to a client that shows notices.
async fn agent_showing_notices(sandbox: &Sandbox, mock: &MockLlm) -> Agent {
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"session": {"notices": {}}})).await;
    agent
}

#[tokio::test]
async fn a_server_slow_to_start_holds_up_neither_the_session_nor_the_first_prompt() {
    let sandbox = Sandbox::new();
    let started = sandbox.home.path().join("slow-started");
    let gate = sandbox.home.path().join("slow-may-start");
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("first"), Step::text("second")] }).await.unwrap();
    let mut agent = agent_showing_notices(&sandbox, &mock).await;
    // The server cannot be ready before the gate exists: the session is answered without it.
    let session = session_with(&mut agent, &sandbox, json!([everything_starting_at("slow", &started, &gate)])).await;
    let (response, updates) = agent.prompt(&session, "hi", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(started.exists(), "the server's command was started in the background");
    assert!(!gate.exists());
    let offered = tool_names(&mock.requests()[0]);
    assert!(
        !offered.iter().any(|name| name.starts_with("mcp__slow__")),
        "the first request went out without the server: {offered:?}"
    );
    assert!(
        notice_titles(&updates).contains("The MCP server `slow` is still connecting; its tools come when it is ready."),
        "the user is told: {}",
        notice_titles(&updates)
    );
    // Now it may start; the same connection attempt goes on, and its tools join the session.
    std::fs::write(&gate, "").unwrap();
    agent.prompt(&session, "again", |_| "reject_once").await;
    let second = serde_json::to_string(&mock.requests()[1]["messages"]).unwrap();
    assert!(
        second.contains("More tools are offered on demand") && second.contains("mcp__slow__echo"),
        "the server's tools arrived for the next prompt: {second}"
    );
}

#[tokio::test]
async fn servers_that_failed_or_wait_for_approval_are_told() {
    let sandbox = Sandbox::new();
    let theirs = sandbox.home.path().join("theirs-started");
    std::fs::write(
        sandbox.project.path().join(".mcp.json"),
        json!({"mcpServers": {"theirs": {"command": "touch", "args": [theirs]}}}).to_string(),
    )
    .unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok")] }).await.unwrap();
    let mut agent = agent_showing_notices(&sandbox, &mock).await;
    let servers = json!([{"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []}]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let (_, asked, updates) = agent.prompt_rejecting(&session, "hi").await;
    assert_eq!(asked.len(), 1, "the project's settings are asked about: {asked:?}");
    let said = notice_titles(&updates);
    assert!(
        said.contains(
            "The MCP server `missing` could not connect: could not start `/nonexistent/mcp-server`: No such file or directory"
        ) && said.contains("Trying again in the background."),
        "a server that failed to start: {said}"
    );
    assert!(
        said.contains("Skipped the project's hooks and rules (not approved): MCP server `theirs`: touch"),
        "a server not approved: {said}"
    );
    assert!(!theirs.exists(), "and it never ran");
    assert!(mock.requests().len() == 1, "the prompt went on to the model");
}

#[tokio::test]
async fn a_mention_of_a_server_that_is_not_connected_stays_prose() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok"), Step::text("ok")] }).await.unwrap();
    let mut agent = agent_showing_notices(&sandbox, &mock).await;
    let servers = json!([{"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []}]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let typed = "compare @missing:demo://resource/static/document/architecture.md with @nobody:notes.txt";
    let (response, updates) = agent.prompt(&session, typed, |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let messages = mock.requests()[0]["messages"].clone();
    let sent = serde_json::to_string(&messages).unwrap();
    assert!(sent.contains(typed), "the text as typed: {sent}");
    assert!(!sent.contains("<mcp-resource"), "no resource came with it: {sent}");
    // A mention that failed to attach would be told with the next prompt's notices.
    let (_, next) = agent.prompt(&session, "next", |_| "reject_once").await;
    let said = notice_titles(&[updates, next].concat());
    assert!(!said.contains("was not attached"), "and no error: {said}");
}

#[tokio::test]
async fn a_changed_oauth_setting_of_a_projects_http_server_asks_again() {
    let sandbox = Sandbox::new();
    let write_config = |scopes: &str| {
        let server =
            json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": {"clientId": "larik", "scopes": scopes}});
        let config = json!({"mcpServers": {"remote": server}});
        std::fs::write(sandbox.project.path().join(".mcp.json"), config.to_string()).unwrap();
    };
    // One session's first prompt, the project's settings answered with `answer`: how many asked.
    let asked_with = |answer: &'static str| {
        let sandbox = &sandbox;
        async move {
            let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok")] }).await.unwrap();
            let mut agent = agent_showing_notices(sandbox, &mock).await;
            let session = agent.new_session(&sandbox.project_path()).await;
            let mut asked = 0;
            agent
                .prompt(&session, "hi", |_| {
                    asked += 1;
                    answer
                })
                .await;
            agent.close_stdin();
            agent.wait_exit().await;
            asked
        }
    };
    write_config("repo");
    assert_eq!(asked_with("allow_always").await, 1);
    assert_eq!(asked_with("reject_once").await, 0, "approved as it is");
    write_config("repo admin:org");
    assert_eq!(asked_with("reject_once").await, 1, "wider scopes ask again");
}
