#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Long sessions against the real binary: compaction on its own when the context nears the
//! window (and after the provider said it overflowed), `/compact` by hand with Claude Code's
//! PreCompact and SessionStart hooks, the compaction seen by the editor and kept in the session
//! file; usage as the session's total in both providers' formats; a budget that stops a turn.

use larik_tests::harness::{Agent, Sandbox, message_text, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

/// Writes the user's Larik settings (`~/.config/larik/settings.json`).
fn user_settings(sandbox: &Sandbox, settings: Value) {
    let path = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, settings.to_string()).unwrap();
}

/// The environment with another model named (the mock answers for any).
fn env_with_model(sandbox: &Sandbox, env: Vec<(String, String)>, model: &str) -> Vec<(String, String)> {
    let _ = sandbox;
    env.into_iter()
        .map(|(key, value)| if key == "LARIK_MODEL" { (key, model.to_owned()) } else { (key, value) })
        .collect()
}

/// A step answered only by a summarizer's request.
fn summary(text: &str) -> Step {
    Step { when: Some("<transcript".into()), ..Step::text(text) }
}

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

async fn call(agent: &mut Agent, method: &str, params: Value) -> (Value, Vec<Value>) {
    let id = agent.request(method, params).await;
    agent.response(id).await
}

#[tokio::test]
async fn a_turn_nearing_the_window_is_compacted_and_goes_on_and_a_load_continues_from_the_summary() {
    let sandbox = Sandbox::new();
    // A small window, as a local model's: the first request fits, the one after two large reads
    // would not.
    user_settings(&sandbox, json!({"contextWindow": 30000, "compaction": {"threshold": 0.5}}));
    let lines: String = (0..1500).map(|n| format!("line {n:05} of the log\n")).collect();
    std::fs::write(sandbox.project.path().join("a.log"), &lines).unwrap();
    std::fs::write(sandbox.project.path().join("b.log"), &lines).unwrap();
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::tool("toolu_a", "read", json!({"path": "a.log"})),
            Step::text("a.log has 1500 lines."),
            Step::tool("toolu_b", "read", json!({"path": "b.log"})),
            summary("NOTES: the user asked for a.log and b.log to be counted; a.log has 1500 lines."),
            Step::text("b.log has 1500 lines too."),
        ],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"session": {"compaction": {}}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (_, updates) = agent.prompt(&session, "Count the lines of a.log", |_| "allow_once").await;
    assert!(updates_of(&updates, "compaction_update").is_empty(), "the first turn fits");
    let (response, updates) = agent.prompt(&session, "Now b.log", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(message_text(&updates), "b.log has 1500 lines too.");

    let compactions = updates_of(&updates, "compaction_update");
    assert_eq!(compactions.len(), 2, "{compactions:?}");
    assert_eq!(compactions[0]["status"], "in_progress");
    assert_eq!(compactions[1]["status"], "completed");
    assert_eq!(compactions[0]["compactionId"], compactions[1]["compactionId"]);
    assert!(compactions[1]["summary"][0]["text"].as_str().unwrap().starts_with("NOTES:"));

    compacted_within_bounds(&mock.requests(), lines.len());
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());

    // Loaded again: the whole visible conversation is replayed with the compaction where it was,
    // and the model continues from the summary.
    let next = MockLlm::start(Scenario { responses: vec![Step::text("Still here.")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(next.url()));
    agent.initialize_with(json!({"session": {"compaction": {}}})).await;
    let (loaded, replayed) = call(
        &mut agent,
        "session/load",
        json!({"sessionId": session, "cwd": sandbox.project_path(), "mcpServers": []}),
    )
    .await;
    assert!(loaded["result"].is_object(), "{loaded}");
    let kinds: Vec<&str> =
        replayed.iter().map(|message| message["params"]["update"]["sessionUpdate"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "session_info_update",
            "user_message_chunk",
            "tool_call",
            "agent_message_chunk",
            "user_message_chunk",
            "tool_call",
            "compaction_update",
            "agent_message_chunk"
        ],
        "{replayed:?}"
    );
    assert_eq!(replayed[1]["params"]["update"]["content"]["text"], "Count the lines of a.log");
    let (_, updates) = agent.prompt(&session, "Which was longer?", |_| "allow_once").await;
    assert_eq!(message_text(&updates), "Still here.");
    let messages = next.requests()[0]["messages"].as_array().unwrap().clone();
    assert!(text_of(&messages[0]).contains("<conversation-summary>"), "{messages:?}");
    assert!(
        !messages.iter().any(|message| text_of(message) == "Count the lines of a.log"),
        "the summarized prompt is not sent again"
    );
    assert_eq!(text_of(messages.last().unwrap()), "Which was longer?");
}

#[tokio::test]
async fn a_context_overflow_compacts_and_retries_once() {
    let sandbox = Sandbox::new();
    let overflow = Step {
        status: Some(400),
        body: Some(json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 250123 tokens > 200000 maximum"}}).to_string()),
        ..Step::default()
    };
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::text("The parser is in src/parse.rs."),
            overflow,
            summary("NOTES: the parser lives in src/parse.rs."),
            Step::text("It has three functions."),
        ],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "Where is the parser?", |_| "allow_once").await;
    let (response, updates) = agent.prompt(&session, "How many functions does it have?", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(message_text(&updates).ends_with("It has three functions."), "{}", message_text(&updates));
    // A client without compaction updates is told in words.
    assert!(message_text(&updates).contains("was compacted"), "{}", message_text(&updates));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let retried = requests[3]["messages"].as_array().unwrap();
    assert!(text_of(&retried[0]).contains("NOTES: the parser lives"), "{retried:?}");
    assert_eq!(
        text_of(retried.last().unwrap()),
        "How many functions does it have?",
        "the prompt itself is kept and retried"
    );
}

#[tokio::test]
async fn compact_by_hand_takes_instructions_and_runs_claude_codes_hooks() {
    let sandbox = Sandbox::new();
    let seen = sandbox.home.path().join("precompact.json");
    let settings = sandbox.home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let hooks = json!({"hooks": {
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": format!("cat > {}", seen.display())}]}],
        "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "echo 'Remember: the build needs --features browser'"}]}],
    }});
    std::fs::write(&settings, hooks.to_string()).unwrap();
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::text("Plan: a lexer, then a parser."),
            summary("NOTES: plan is lexer then parser."),
            Step::text("Starting with the lexer."),
        ],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "Plan the parser", |_| "allow_once").await;
    let (response, updates) = agent.prompt(&session, "/compact keep the API names", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(
        message_text(&updates).contains("NOTES: plan is lexer then parser."),
        "the summary is shown: {}",
        message_text(&updates)
    );
    let payload: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(payload["hook_event_name"], "PreCompact");
    assert_eq!(payload["trigger"], "manual");
    assert_eq!(payload["custom_instructions"], "keep the API names");
    assert!(
        text_of(&mock.requests()[1]["messages"][0]).contains("keep the API names"),
        "the instructions reach the summarizer"
    );

    agent.prompt(&session, "go on", |_| "allow_once").await;
    let messages = mock.requests()[2]["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 3, "summary, acknowledgement, prompt: {messages:?}");
    let opening = text_of(&messages[0]);
    assert!(
        opening.contains("NOTES: plan is lexer then parser.")
            && opening.contains("Remember: the build needs --features browser"),
        "{opening}"
    );
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(text_of(&messages[2]), "go on");
}

#[tokio::test]
async fn usage_updates_carry_the_sessions_total_cost_in_both_formats() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("a.txt"), "one\n").unwrap();
    // Anthropic: claude-sonnet-4-5 at $3 in, $15 out, $0.30 cache hits, $3.75 cache writes.
    let mut first = Step::tool("toolu_r", "read", json!({"path": "a.txt"}));
    first.usage = Some(
        json!({"input_tokens": 1000, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 500, "output_tokens": 100}),
    );
    let mut second = Step::text("It says one.");
    second.usage = Some(
        json!({"input_tokens": 200, "cache_read_input_tokens": 3500, "cache_creation_input_tokens": 0, "output_tokens": 50}),
    );
    let mock = MockLlm::start(Scenario { responses: vec![first, second] }).await.unwrap();
    let mut agent =
        Agent::spawn(&sandbox.project_path(), &env_with_model(&sandbox, sandbox.env(mock.url()), "claude-sonnet-4-5"));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (_, updates) = agent.prompt(&session, "What does a.txt say?", |_| "allow_once").await;
    let usage = updates_of(&updates, "usage_update");
    assert_eq!(usage.len(), 2);
    assert_eq!((usage[0]["used"].as_u64(), usage[0]["size"].as_u64()), (Some(3600), Some(200_000)));
    assert!((usage[0]["cost"]["amount"].as_f64().unwrap() - 0.006975).abs() < 1e-9, "{}", usage[0]);
    assert_eq!(usage[0]["cost"]["currency"], "USD");
    assert_eq!(usage[1]["used"].as_u64(), Some(3750));
    assert!(
        (usage[1]["cost"]["amount"].as_f64().unwrap() - 0.009375).abs() < 1e-9,
        "the session's total, not the response's: {}",
        usage[1]
    );
    assert_eq!(
        usage[1]["_meta"]["larik"]["spent"],
        json!({"inputTokens": 1200, "cacheReadTokens": 5500, "cacheWriteTokens": 500, "outputTokens": 150}),
        "the session's tokens, by how they are billed"
    );
    let (_, updates) = agent.prompt(&session, "/budget", |_| "allow_once").await;
    let report = message_text(&updates);
    assert!(report.starts_with("Spent $0.0094 (no cost limit"), "{report}");
    assert!(report.contains("1200 input, 5500 read from cache, 500 written to cache, 150 output"), "{report}");

    // OpenAI: gpt-4o at $2.50 in, $10 out, $1.25 cached; `prompt_tokens` includes the cached ones.
    let sandbox = Sandbox::new();
    let mut first = Step::text("One.");
    first.usage =
        Some(json!({"prompt_tokens": 1000, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 800}}));
    let mut second = Step::text("Two.");
    second.usage = Some(
        json!({"prompt_tokens": 1200, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 1000}}),
    );
    let mock = MockLlm::start(Scenario { responses: vec![first, second] }).await.unwrap();
    let mut agent = Agent::spawn(
        &sandbox.project_path(),
        &env_with_model(&sandbox, sandbox.openai_env(mock.url()), "openai:gpt-4o"),
    );
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (_, one) = agent.prompt(&session, "first", |_| "allow_once").await;
    let (_, two) = agent.prompt(&session, "second", |_| "allow_once").await;
    let (one, two) = (updates_of(&one, "usage_update")[0].clone(), updates_of(&two, "usage_update")[0].clone());
    assert_eq!(one["used"].as_u64(), Some(1100), "cached tokens are counted once: {one}");
    assert!((one["cost"]["amount"].as_f64().unwrap() - 0.0025).abs() < 1e-9, "{one}");
    assert!((two["cost"]["amount"].as_f64().unwrap() - 0.00525).abs() < 1e-9, "{two}");

    // A model without a known price reports its tokens and no made-up cost.
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("Hi.")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (_, updates) = agent.prompt(&session, "hi", |_| "allow_once").await;
    let usage = updates_of(&updates, "usage_update");
    assert_eq!(usage[0]["used"].as_u64(), Some(142));
    assert!(usage[0].get("cost").is_none(), "{}", usage[0]);
}

#[tokio::test]
async fn a_spent_budget_stops_the_turn_before_the_next_request() {
    let sandbox = Sandbox::new();
    user_settings(&sandbox, json!({"budget": {"maxCostUsd": 0.005}}));
    std::fs::write(sandbox.project.path().join("a.txt"), "one\n").unwrap();
    let mut first = Step::tool("toolu_r", "read", json!({"path": "a.txt"}));
    first.usage = Some(
        json!({"input_tokens": 1000, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 500, "output_tokens": 100}),
    );
    let mock = MockLlm::start(Scenario { responses: vec![first, Step::text("never asked")] }).await.unwrap();
    let mut agent =
        Agent::spawn(&sandbox.project_path(), &env_with_model(&sandbox, sandbox.env(mock.url()), "claude-sonnet-4-5"));
    agent.initialize_with(json!({"session": {"notices": {}}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, updates) = agent.prompt(&session, "What does a.txt say?", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "max_tokens", "{response}");
    let notices = updates_of(&updates, "notice");
    assert!(
        notices.iter().any(|notice| notice.to_string().contains("budget is spent: $0.0070 of $0.005")),
        "{notices:?}"
    );
    assert_eq!(mock.requests().len(), 1, "no request beyond the budget");
    let (response, _) = agent.prompt(&session, "and now?", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "max_tokens");
    assert_eq!(mock.requests().len(), 1, "a later prompt is stopped too");
}

/// The summary was asked for over a bounded transcript, and the turn went on from it with a
/// smaller request (`read_bytes`: what the compacted read returned).
fn compacted_within_bounds(requests: &[Value], read_bytes: usize) {
    assert_eq!(requests.len(), 5);
    // The summary was asked for over a bounded transcript, not the conversation resent whole.
    let asked = &requests[3];
    assert!(asked["system"].to_string().contains("working notes"), "{}", asked["system"]);
    assert!(
        asked.get("tools").is_none_or(|tools| tools.as_array().is_none_or(Vec::is_empty)),
        "no tools with a summary request"
    );
    let transcript = text_of(&asked["messages"][0]);
    assert!(
        transcript.contains("USER: Count the lines of a.log")
            && transcript.contains("TOOL CALL read")
            && transcript.contains("bytes cut")
            && transcript.contains("USER: Now b.log"),
        "{transcript}"
    );
    assert!(asked.to_string().len() < 12_000, "the summarizer's request is bounded: {} bytes", asked.to_string().len());
    // The turn went on from the summary with the latest calls and their (cut) results.
    let messages = requests[4]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(text_of(&messages[0]).contains("<conversation-summary>\nNOTES: the user asked"));
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert!(messages[2].to_string().contains("line 00000") && messages[2].to_string().contains("bytes cut"));
    let before = requests[2].to_string().len() + read_bytes;
    assert!(
        requests[4].to_string().len() * 4 / 3 < before,
        "the request after compaction is smaller than the one it replaced"
    );
    assert!(
        requests[4].to_string().len() / 4 < 15_000,
        "and under the threshold: {} bytes",
        requests[4].to_string().len()
    );
}
