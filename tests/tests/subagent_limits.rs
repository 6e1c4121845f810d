#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What bounds a subagent, with the real binary: at most 100 model requests, or its role's
//! `maxTurns`; its role's `isolation: worktree`; its spending priced for its own model and held
//! to the session's budget.

use larik_tests::harness::{Sandbox, git, updates_of};
use larik_tests::mock_llm::Step;
use larik_tests::tasks::{calls, child, one_commit_repository, result_of, result_text, start, start_with_model, task};
use serde_json::{Value, json};

/// A child's model request that searches for something new each time (so no loop is seen).
fn search(marker: &str, turn: usize) -> Step {
    child(marker, Step::tool(&format!("{marker}-{turn}"), "grep", json!({"pattern": format!("nothing-{turn}")})))
}

/// How many requests the child whose prompt holds `marker` made (the parent's history names its
/// task too: those that also hold the parent's prompt `go` are the parent's).
fn requests_of(requests: &[Value], marker: &str) -> usize {
    requests
        .iter()
        .filter(|request| request.to_string().contains(marker) && !request.to_string().contains("\"go\""))
        .count()
}

/// The task call's last result as the editor shows it, and whether it failed.
fn shown_result(updates: &[Value], id: &str) -> (String, bool) {
    let finished = updates_of(updates, "tool_call_update")
        .into_iter()
        .rfind(|update| update["toolCallId"] == id && update["status"].is_string())
        .unwrap_or_else(|| panic!("{id} finished: {updates:?}"));
    let text = finished["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["content"]["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, finished["status"] == "failed")
}

#[tokio::test]
async fn a_roles_max_turns_caps_the_children_that_run_in_it() {
    let sandbox = Sandbox::new();
    // The built-in general-purpose subagent runs in the `worker` role.
    sandbox.write_user_settings(&json!({"roles": {"worker": {"maxTurns": 2}}}));
    let mut steps = vec![calls(vec![task("t1", "general-purpose", "search", "ROLE-CAPPED: search")])];
    steps.push(Step { when: Some("limit of 2 model requests".into()), ..Step::text("It stopped.") });
    steps.extend((1..=3).map(|turn| search("ROLE-CAPPED", turn)));
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "go", |params| panic!("nothing here asks: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests_of(&requests, "ROLE-CAPPED"), 2, "the role's maxTurns held");
    let limited = result_of(requests.last().unwrap(), "t1");
    assert_eq!(limited["is_error"], true, "{limited}");
    assert!(result_text(&limited).contains("limit of 2 model requests"), "{limited}");
}

#[tokio::test]
async fn a_child_without_a_limit_stops_after_100_model_requests() {
    let sandbox = Sandbox::new();
    // The session's own cap is lower: a child's is its own.
    sandbox.write_user_settings(&json!({"maxTurnRequests": 5}));
    let mut steps = vec![calls(vec![task("t1", "explore", "search", "UNCAPPED: search")])];
    steps.push(Step { when: Some("limit of 100 model requests".into()), ..Step::text("It stopped.") });
    steps.extend((1..=101).map(|turn| search("UNCAPPED", turn)));
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "go", |params| panic!("nothing here asks: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests_of(&requests, "UNCAPPED"), 100, "the default cap held");
    let limited = result_of(requests.last().unwrap(), "t1");
    assert!(result_text(&limited).contains("limit of 100 model requests"), "{limited}");
}

#[tokio::test]
async fn a_role_with_worktree_isolation_gives_its_child_a_worktree() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    one_commit_repository(&root);
    sandbox.write_user_settings(&json!({"roles": {"worker": {"isolation": "worktree"}}}));
    // Neither the task nor the built-in definition asks for a worktree.
    let steps = vec![
        calls(vec![task("t1", "general-purpose", "write a note", "ISOLATED-ROLE: write a note")]),
        child("ISOLATED-ROLE", Step::tool("c1", "write", json!({"path": "note.txt", "content": "mine\n"}))),
        child("ISOLATED-ROLE", Step::text("Wrote note.txt.")),
        child("Wrote note.txt.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "go", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let report = result_text(&result_of(mock.requests().last().unwrap(), "t1"));
    let branch = report
        .split('`')
        .find(|part| part.starts_with("larik/task-"))
        .unwrap_or_else(|| panic!("the worktree's branch is named: {report}"))
        .to_owned();
    assert!(!root.join("note.txt").exists(), "the user's checkout is untouched");
    assert_eq!(git(&root, &["show", &format!("{branch}:note.txt")]), "mine\n", "the note is on the task's branch");
}

#[tokio::test]
async fn a_childs_requests_are_priced_for_its_own_model() {
    let sandbox = Sandbox::new();
    let agents = sandbox.home.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("cheap.md"),
        "---\nname: cheap\ndescription: Quick lookups.\ntools: Read\nmodel: claude-haiku-4-5\n---\nBe quick.\n",
    )
    .unwrap();
    let steps = vec![
        calls(vec![task("t1", "cheap", "look", "PRICED: look it up")]),
        child("PRICED", Step::text("Found it.")),
        child("Found it.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start_with_model(&sandbox, steps, "claude-sonnet-4-5").await;
    let (response, updates) = agent.prompt(&session, "go", |params| panic!("nothing here asks: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let models: Vec<Value> = mock.requests().iter().map(|request| request["model"].clone()).collect();
    assert_eq!(models, ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"]);
    // Each request: 100 input and 42 output tokens. Haiku 4.5 at $1 and $5 a million,
    // Sonnet 4.5 at $3 and $15.
    let (shown, _) = shown_result(&updates, "t1");
    assert!(shown.contains("The subagent spent 142 tokens") && shown.contains("$0.0003"), "{shown}");
    let last = updates_of(&updates, "usage_update").pop().expect("a usage update");
    let total = last["cost"]["amount"].as_f64().unwrap();
    assert!((total - (2.0 * 0.00093 + 0.00031)).abs() < 1e-9, "the session's cost: {last}");
}

#[tokio::test]
async fn the_sessions_budget_stops_a_child_that_spends_it() {
    let sandbox = Sandbox::new();
    // One Sonnet 4.5 request of the mock's costs $0.00093: the parent's and the child's first
    // together pass the budget.
    sandbox.write_user_settings(&json!({"budget": {"maxCostUsd": 0.0015}}));
    let steps = vec![
        calls(vec![task("t1", "explore", "search", "BUDGETED: search")]),
        search("BUDGETED", 1),
        search("BUDGETED", 2),
        Step::text("never asked"),
    ];
    let (mock, mut agent, session) = start_with_model(&sandbox, steps, "claude-sonnet-4-5").await;
    let (response, updates) = agent.prompt(&session, "go", |params| panic!("nothing here asks: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "max_tokens", "the parent stops too: {response}");
    assert_eq!(mock.requests().len(), 2, "the child made one request, then the budget held");
    let (shown, failed) = shown_result(&updates, "t1");
    assert!(failed && shown.contains("the session's budget is spent"), "{shown}");
}
