#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The token saver over ACP with the real binary: turned on in the user's settings, a real
//! `git log` in a real repository reaches the model one line per commit with a note, the exact
//! output sits in the session's private sidecar, and `raw_output` gives the model all of it.

use std::os::unix::fs::PermissionsExt;

use larik_tests::harness::{Agent, Sandbox, git};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

/// The text of the tool result for `id` in a recorded Anthropic request's last message.
fn tool_result(request: &Value, id: &str) -> String {
    let last = request["messages"].as_array().unwrap().last().unwrap();
    let result = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|part| part["type"] == "tool_result" && part["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {last}"));
    result["content"].as_array().unwrap().iter().filter_map(|part| part["text"].as_str()).collect()
}

/// A repository whose commits have long messages, as `git log` shows them in full.
fn repository(sandbox: &Sandbox) -> std::path::PathBuf {
    let root = sandbox.project_path();
    git(&root, &["init", "-q", "-b", "main"]);
    let body = "The reader used to stop at the first nested table and silently drop everything after it.\nTables are now parsed recursively, with the key path kept for error messages so that a bad\nvalue says where it is. The printer follows the same order.";
    for (day, subject) in (10..).zip([
        "Parse nested tables",
        "Keep byte offsets for every token",
        "Document the include directive",
        "Reject duplicate keys",
        "One error enum for the reader",
        "Round-trip tests for the examples",
    ]) {
        std::fs::write(root.join("notes.txt"), subject).unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", subject, "-m", body, "--date", &format!("2026-11-{day}T10:00:00+0000")]);
    }
    root
}

#[tokio::test]
async fn filtered_output_reaches_the_model_and_raw_output_gives_it_all_back() {
    let sandbox = Sandbox::new();
    let settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"lsp": {"enabled": false}, "tokenSaver": true}"#).unwrap();
    let root = repository(&sandbox);
    let exact = git(&root, &["log"]);
    let steps = vec![
        Step::tool("toolu_log", "bash", json!({"command": "git log", "description": "Show the history"})),
        Step::tool("toolu_raw", "raw_output", json!({"tool_call_id": "toolu_log"})),
        Step::text("Read it all."),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&root).await;
    // Without a sandbox on this machine, bash asks; the test allows it.
    let (response, _) = agent.prompt(&session, "what changed lately?", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let tools: Vec<&str> =
        requests[0]["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"raw_output"), "offered while the token saver is on: {tools:?}");

    // The model saw one line per commit and how to get the rest.
    let filtered = tool_result(&requests[1], "toolu_log");
    let lines: Vec<&str> = filtered.lines().collect();
    assert_eq!(lines.len(), 7, "six commits and the note:\n{filtered}");
    assert!(
        lines[0].ends_with(" Round-trip tests for the examples") && lines[5].ends_with(" Parse nested tables"),
        "{filtered}"
    );
    let hash = exact.lines().next().unwrap().trim_start_matches("commit ");
    assert!(lines[0].starts_with(&hash[..12]), "{filtered}");
    assert!(!filtered.contains("Author:") && !filtered.contains("silently drop"), "{filtered}");
    let note = format!("[token saver: {} → ", thousands(exact.len()));
    assert!(
        lines[6].starts_with(&note)
            && lines[6].ends_with(r#"bytes (estimate); the exact output: raw_output {"tool_call_id": "toolu_log"}]"#),
        "{}",
        lines[6]
    );

    // And then all of it, exactly.
    let raw = tool_result(&requests[2], "toolu_raw");
    assert_eq!(raw, format!("{exact}[bytes 0..{0} of {0}; the end]", exact.len()));

    // The exact output is the user's alone, beside the session file.
    let sidecar = sandbox.home.path().join(format!(".local/share/larik/sessions/{session}.raw"));
    let stored = sidecar.join("toolu_log.out");
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), exact);
    assert_eq!(std::fs::metadata(&sidecar).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777, 0o600);
}

fn thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A loaded or resumed session keeps its id and with it the exact outputs stored before: after a
/// restart, `raw_output` still gives back an earlier call's whole output.
#[tokio::test]
async fn raw_output_still_reaches_an_earlier_call_after_load_and_resume() {
    let sandbox = Sandbox::new();
    sandbox.write_user_settings(&json!({"lsp": {"enabled": false}, "tokenSaver": true}));
    let root = repository(&sandbox);
    let exact = git(&root, &["log"]);
    let steps = vec![Step::tool("toolu_log", "bash", json!({"command": "git log"})), Step::text("Summed up.")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&root).await;
    agent.prompt(&session, "what changed lately?", |_| "allow_once").await;
    assert!(!tool_result(&mock.requests()[1], "toolu_log").contains("silently drop"), "the model saw it filtered");
    agent.close_stdin();
    agent.wait_exit().await;
    for method in ["session/load", "session/resume"] {
        let steps =
            vec![Step::tool("toolu_raw", "raw_output", json!({"tool_call_id": "toolu_log"})), Step::text("Read.")];
        let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
        let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
        agent.initialize().await;
        let id = agent.request(method, json!({"sessionId": session, "cwd": root, "mcpServers": []})).await;
        let (opened, _) = agent.response(id).await;
        assert!(opened["result"].is_object(), "{method}: {opened}");
        agent.prompt(&session, "show me all of it", |_| "allow_once").await;
        let raw = tool_result(&mock.requests()[1], "toolu_raw");
        assert_eq!(raw, format!("{exact}[bytes 0..{0} of {0}; the end]", exact.len()), "after {method}");
        agent.close_stdin();
        agent.wait_exit().await;
    }
}
