#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `larik -p` and `larik demo`, run as a user runs them.

use larik_tests::harness::{Sandbox, larik_bin};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

async fn run_headless(sandbox: &Sandbox, mock: &MockLlm, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(larik_bin())
        .args(args)
        .current_dir(sandbox.project_path())
        .env_clear()
        .envs(sandbox.env(mock.url()))
        .output()
        .await
        .expect("run larik")
}

#[tokio::test]
async fn prints_the_answer_and_denies_what_would_ask() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("toolu_w", "write", json!({"path": "x.txt", "content": "x"})),
        Step::text("I could not write it."),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let output = run_headless(&sandbox, &mock, &["-p", "write x.txt"]).await;
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "I could not write it.\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("denied Write x.txt"), "{stderr}");
    assert!(!sandbox.project.path().join("x.txt").exists());
    let result = &mock.requests()[1]["messages"][2]["content"][0];
    assert!(result["content"][0]["text"].as_str().unwrap().contains("Headless mode"), "{result}");
}

#[tokio::test]
async fn sandboxed_commands_run_headless_and_unsandboxed_ones_are_denied() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("t1", "bash", json!({"command": "echo built > out.txt && echo ok"})),
        Step::tool("t2", "bash", json!({"command": "echo escaped > escaped.txt", "sandbox": false})),
        Step::text("done"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let output = run_headless(&sandbox, &mock, &["-p", "build"]).await;
    assert!(output.status.success());
    assert_eq!(
        std::fs::read_to_string(sandbox.project.path().join("out.txt")).unwrap(),
        "built\n",
        "the sandboxed command ran without asking"
    );
    assert!(
        !sandbox.project.path().join("escaped.txt").exists(),
        "the call outside the sandbox would ask, so it was denied"
    );
    let requests = mock.requests();
    let denied = &requests[2]["messages"].as_array().unwrap().last().unwrap()["content"][0]["content"][0]["text"];
    assert!(denied.as_str().unwrap().contains("Headless mode"), "{denied}");
}

#[tokio::test]
async fn json_output_is_one_object() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("forty-two")] }).await.unwrap();
    let output = run_headless(&sandbox, &mock, &["-p", "answer", "--output-format", "json"]).await;
    let value: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(value["result"], "forty-two");
    assert_eq!(value["stop_reason"], "end_turn");
    assert_eq!(
        value["usage"],
        json!({"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 42}),
        "the session's tokens, in Claude Code's fields"
    );
    assert!(value.get("total_cost_usd").is_none(), "the mock model has no price: no made-up cost");
    let mut billed = Step::text("a b");
    billed.usage = Some(
        json!({"input_tokens": 200, "cache_read_input_tokens": 3500, "cache_creation_input_tokens": 300, "output_tokens": 50}),
    );
    let stream = MockLlm::start(Scenario { responses: vec![billed] }).await.unwrap();
    let output = run_headless(&sandbox, &stream, &["-p", "answer", "--output-format", "stream-json"]).await;
    let lines: Vec<Value> =
        String::from_utf8_lossy(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines.last().unwrap()["type"], "result");
    assert_eq!(
        lines.last().unwrap()["usage"],
        json!({"input_tokens": 200, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 3500, "output_tokens": 50})
    );
    assert!(lines.iter().any(|line| line["type"] == "text"));
}

#[tokio::test]
async fn a_model_error_exits_non_zero() {
    let sandbox = Sandbox::new();
    let unauthorized = Step::http_error(401);
    let mock = MockLlm::start(Scenario { responses: vec![unauthorized] }).await.unwrap();
    let output = run_headless(&sandbox, &mock, &["-p", "hi"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("authentication failed"));
}

#[tokio::test]
async fn the_demo_shows_a_tool_call_and_a_diff_offline() {
    let home = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(larik_bin())
        .args(["demo", "--fast"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("● Edit greet.py"), "{stdout}");
    assert!(stdout.contains("+    return f\"Hello, {name}!\""), "{stdout}");
    assert!(
        stdout.contains("FAILED (failures=1)") && stdout.contains("OK"),
        "the tests really ran before and after: {stdout}"
    );
}

#[tokio::test]
async fn headless_waits_for_background_tasks_and_delivers_their_results() {
    let sandbox = Sandbox::new();
    let start = |id: &str| {
        let call = larik_core::replay::RecordedToolCall {
            id: Some(id.into()),
            name: "task".into(),
            input: json!({"subagent_type": "explore", "description": "count files", "prompt": "BG-HEADLESS: count the files", "run_in_background": true}),
        };
        let mut step = Step::default();
        step.response.tool_calls = vec![call];
        step
    };
    let when = |text: &str, step: Step| Step { when: Some(text.into()), ..step };
    let steps = vec![
        start("t1"),
        when("Started the background task", Step::text("Started the count. ")),
        // The child answers only after the first turn ended.
        when("BG-HEADLESS", Step { after_requests: Some(3), ..Step::text("There are 0 files.") }),
        when("Background task results arrived", Step::text("The project has 0 files.")),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let output = run_headless(&sandbox, &mock, &["-p", "count the files"]).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Started the count. The project has 0 files.\n");
    let last = mock.requests().last().unwrap().to_string();
    assert!(last.contains("task-notification id=\\\"bg-1\\\"") && last.contains("There are 0 files."), "{last}");
}

#[tokio::test]
async fn a_custom_command_runs_headless_as_in_the_editor() {
    let sandbox = Sandbox::new();
    let commands = sandbox.project_path().join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("summarize.md"),
        "---\ndescription: Summarize a file\nargument-hint: [file]\n---\nSummarize $ARGUMENTS in two sentences.\n",
    )
    .unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("Two sentences.")] }).await.unwrap();
    let output = run_headless(&sandbox, &mock, &["-p", "/summarize README.md"]).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(mock.requests()[0]["messages"][0]["content"][0]["text"], "Summarize README.md in two sentences.");
}

#[tokio::test]
async fn built_in_commands_answer_headless_without_asking_the_model() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let said = |output: std::process::Output| {
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let budget = said(run_headless(&sandbox, &mock, &["-p", "/budget"]).await);
    assert!(budget.starts_with("Spent $0.0000 (no cost limit; set budget.maxCostUsd); 0 tokens"), "{budget}");
    let mcp = said(run_headless(&sandbox, &mock, &["-p", "/mcp"]).await);
    assert!(mcp.starts_with("No MCP servers are configured"), "{mcp}");
    let undo = said(run_headless(&sandbox, &mock, &["-p", "/undo"]).await);
    assert_eq!(undo, "Nothing was undone: there is nothing to undo: no turn of this session changed a file.\n");
    let output = run_headless(&sandbox, &mock, &["-p", "/tasks", "--output-format", "json"]).await;
    let value: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(value["result"], "No background tasks are running.");
    assert_eq!(value["stop_reason"], "end_turn");
    assert!(mock.requests().is_empty(), "a built-in command is not a prompt");
}
