#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Whole turns over ACP against the real binary and the mock model: what the editor sees, and
//! what the model was sent.

use larik_tests::harness::{Agent, Sandbox, message_text, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

async fn start(steps: Vec<Step>) -> (Sandbox, MockLlm, Agent, String) {
    let sandbox = Sandbox::new();
    // The tools offered must not depend on which language servers this machine has on PATH.
    let settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(settings, r#"{"lsp": {"enabled": false}}"#).unwrap();
    let mock = MockLlm::start(Scenario { responses: steps }).await.expect("mock");
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (sandbox, mock, agent, session)
}

/// The tool results of a recorded Anthropic request's last message.
fn tool_results(request: &Value) -> Vec<Value> {
    let messages = request["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    last["content"].as_array().expect("content").iter().filter(|part| part["type"] == "tool_result").cloned().collect()
}

#[tokio::test]
async fn a_text_turn_streams_and_ends() {
    // Pieces that arrive apart are shown apart; pieces that arrive together may be merged.
    let mut step = Step::text("Hello from the model, streamed in pieces.");
    step.chunk_delay_ms = 20;
    let (sandbox, mock, mut agent, session) = start(vec![step]).await;
    std::fs::write(sandbox.project.path().join("AGENTS.md"), "Always answer in English.\n").unwrap();
    let (response, updates) = agent.prompt(&session, "Say hello", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(updates_of(&updates, "agent_message_chunk").len() > 1, "text arrives in several chunks");
    assert_eq!(message_text(&updates), "Hello from the model, streamed in pieces.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request["model"], "claude-mock");
    assert_eq!(request["stream"], true);
    assert_eq!(request["messages"][0]["content"][0]["text"], "Say hello");
    let system = request["system"][0]["text"].as_str().unwrap();
    assert!(system.contains(&format!("Working directory: {}", sandbox.project_path().display())), "{system}");
    assert!(system.contains("Git repository: no"));
    let tools: Vec<&str> =
        request["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    let mut expected = vec![
        "ask_user",
        "bash",
        "bash_output",
        "edit",
        "glob",
        "grep",
        "kill_shell",
        "multi_edit",
        "read",
        "task",
        "task_stop",
        "task_wait",
        "todo",
        "web_fetch",
        "web_search",
        "write",
    ];
    if cfg!(feature = "browser") {
        // The browser's tools are offered on demand: found with tool_search, called with use_tool.
        expected.extend(["tool_search", "use_tool"]);
        expected.sort_unstable();
        let search = request["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "tool_search").unwrap();
        assert!(search["description"].as_str().unwrap().contains("browser_navigate"), "{search}");
    }
    assert_eq!(tools, expected, "sorted by name, the browser's on demand with the browser feature");
    let read = request["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "read").unwrap();
    assert_eq!(read["input_schema"]["required"], json!(["path"]), "the schema is derived from the input type");
}

#[tokio::test]
async fn a_fast_stream_arrives_whole_in_few_messages() {
    // 4,000 deltas sent back to back: the editor gets every character, merged into a handful of
    // chunks instead of thousands of messages.
    let mut step = Step::text("ab");
    step.chunk_chars = Some(2);
    step.repeat = Some(4000);
    let (_sandbox, _mock, mut agent, session) = start(vec![step]).await;
    let (response, updates) = agent.prompt(&session, "stream", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(message_text(&updates), "ab".repeat(4000), "no text was lost or reordered");
    let chunks = updates_of(&updates, "agent_message_chunk").len();
    assert!(chunks < 400, "{chunks} messages for 4,000 deltas: text was not merged");
}

#[tokio::test]
async fn project_memory_reaches_the_system_prompt() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("AGENTS.md"), "Always answer in English.\n").unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "hi", |_| "reject_once").await;
    let system = mock.requests()[0]["system"][0]["text"].as_str().unwrap().to_owned();
    assert!(system.contains("<project-instructions file=\"AGENTS.md\">\nAlways answer in English."), "{system}");
}

#[tokio::test]
async fn a_write_asks_and_runs_when_allowed() {
    let steps = vec![
        Step::tool("toolu_w", "write", json!({"path": "notes/hello.txt", "content": "hi\n"})),
        Step::text("Written."),
    ];
    let (sandbox, mock, mut agent, session) = start(steps).await;
    let mut asked = Vec::new();
    let (response, updates) = agent
        .prompt(&session, "write a file", |params| {
            asked.push(params.clone());
            "allow_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(std::fs::read_to_string(sandbox.project.path().join("notes/hello.txt")).unwrap(), "hi\n");
    assert_eq!(asked.len(), 1);
    let kinds: Vec<&str> =
        asked[0]["options"].as_array().unwrap().iter().map(|option| option["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "toolu_w");
    assert_eq!(asked[0]["toolCall"]["content"][0]["type"], "diff", "the prompt shows the change");
    let call = updates_of(&updates, "tool_call")[0];
    assert_eq!((call["toolCallId"].as_str(), call["kind"].as_str()), (Some("toolu_w"), Some("edit")));
    assert!(call.get("status").is_none_or(|status| status == "pending"), "a new call is pending (the default): {call}");
    let done = updates_of(&updates, "tool_call_update")
        .into_iter()
        .find(|update| update["status"] == "completed")
        .expect("completed update");
    let diff = &done["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], sandbox.project_path().join("notes/hello.txt").display().to_string());
    assert_eq!(diff["newText"], "hi\n");
    assert!(diff.get("oldText").is_none_or(Value::is_null), "a new file has no old text");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], "toolu_w");
    assert_eq!(results[0]["is_error"], false);
    assert_eq!(message_text(&updates), "Written.");
}

#[tokio::test]
async fn a_rejection_with_feedback_reaches_the_model_and_changes_nothing() {
    let steps =
        vec![Step::tool("toolu_w", "write", json!({"path": "x.txt", "content": "no\n"})), Step::text("Understood.")];
    let (sandbox, mock, mut agent, session) = start(steps).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "write"}]}))
        .await;
    let mut updates = Vec::new();
    let response = loop {
        let message = agent.next().await;
        if message["id"] == json!(id) && message.get("method").is_none() {
            break message;
        }
        if message["method"] == "session/request_permission" {
            let answer = json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}, "_meta": {"larik": {"feedback": "put it in docs/ instead"}}});
            agent.reply(&message, answer).await;
        } else {
            updates.push(message["params"]["update"].clone());
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(!sandbox.project.path().join("x.txt").exists());
    let failed = updates_of(&updates, "tool_call_update").into_iter().find(|update| update["status"] == "failed");
    assert!(failed.is_some(), "the editor sees the call fail: {updates:?}");
    let results = tool_results(&mock.requests()[1]);
    assert_eq!(results[0]["is_error"], true);
    let text = results[0]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("rejected") && text.contains("put it in docs/ instead"), "{text}");
}

#[tokio::test]
async fn an_edit_after_a_read_reports_its_diff() {
    let steps = vec![
        Step::tool("toolu_e1", "edit", json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "a - b"})),
        Step::tool("toolu_r", "read", json!({"path": "src/lib.rs"})),
        Step::tool("toolu_e2", "edit", json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "a - b"})),
        Step::text("Done."),
    ];
    let (sandbox, mock, mut agent, session) = start(steps).await;
    let original = "pub fn f(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
    std::fs::create_dir_all(sandbox.project.path().join("src")).unwrap();
    std::fs::write(sandbox.project.path().join("src/lib.rs"), original).unwrap();
    let (response, updates) = agent.prompt(&session, "fix it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let edited = std::fs::read_to_string(sandbox.project.path().join("src/lib.rs")).unwrap();
    assert_eq!(edited, original.replace("a + b", "a - b"));
    let requests = mock.requests();
    let first = tool_results(&requests[1]);
    assert_eq!(first[0]["is_error"], true, "an unread file cannot be edited");
    assert!(first[0]["content"][0]["text"].as_str().unwrap().contains("read it first"));
    let read = tool_results(&requests[2]);
    assert!(read[0]["content"][0]["text"].as_str().unwrap().contains("     2\t    a + b"));
    let diff = updates_of(&updates, "tool_call_update")
        .into_iter()
        .find(|update| update["toolCallId"] == "toolu_e2" && update["status"] == "completed")
        .map(|update| update["content"][0].clone())
        .expect("edit completed");
    assert_eq!(diff["oldText"], original);
    assert_eq!(diff["newText"], edited);
    let edit_call =
        updates_of(&updates, "tool_call").into_iter().find(|call| call["toolCallId"] == "toolu_e2").unwrap();
    assert_eq!(edit_call["locations"][0]["line"], 2, "the location points at the edited line");
}

#[tokio::test]
async fn parallel_safe_calls_return_in_their_original_order() {
    let mut step = Step::default();
    for (index, name) in ["one.txt", "two.txt", "three.txt"].iter().enumerate() {
        step.response.tool_calls.push(larik_core::replay::RecordedToolCall {
            id: Some(format!("toolu_{index}")),
            name: "read".into(),
            input: json!({"path": name}),
        });
    }
    let (sandbox, mock, mut agent, session) = start(vec![step, Step::text("Read them.")]).await;
    for name in ["one", "two", "three"] {
        std::fs::write(sandbox.project.path().join(format!("{name}.txt")), format!("content of {name}\n")).unwrap();
    }
    let (response, _) = agent.prompt(&session, "read all", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results = tool_results(&mock.requests()[1]);
    let ids: Vec<&str> = results.iter().map(|result| result["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["toolu_0", "toolu_1", "toolu_2"]);
    assert!(results[1]["content"][0]["text"].as_str().unwrap().contains("content of two"));
}

/// A fetch and a search in one response are asked about one at a time, then run together: the
/// server (the page and the search service both) answers neither until both have arrived.
#[tokio::test]
async fn web_calls_that_need_approval_still_run_side_by_side() {
    let results = r#"{"results": [{"title": "Both here", "url": "https://example.com/", "content": "Both here."}]}"#;
    let base = larik_tests::pages::serve_together(2, "application/json", results.into()).await;
    let mut step = Step::default();
    for (id, name, input) in [
        ("toolu_fetch", "web_fetch", json!({"url": format!("{base}/page")})),
        ("toolu_search", "web_search", json!({"query": "both"})),
    ] {
        step.response.tool_calls.push(larik_core::replay::RecordedToolCall {
            id: Some(id.into()),
            name: name.into(),
            input,
        });
    }
    let sandbox = Sandbox::new();
    sandbox.write_user_settings(&json!({"lsp": {"enabled": false}, "webSearch": {"provider": "searxng", "url": base}}));
    let mock = MockLlm::start(Scenario { responses: vec![step, Step::text("Found.")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let mut asked = 0;
    let (response, _) = agent
        .prompt(&session, "look it up", |_| {
            asked += 1;
            "allow_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(asked, 2, "each call was asked about");
    let results = tool_results(&mock.requests()[1]);
    assert_eq!(results.len(), 2);
    for result in &results {
        assert_eq!(result["is_error"], false, "{result}");
        assert!(result["content"][0]["text"].as_str().unwrap().contains("Both here."), "{result}");
    }
}

/// A call whose input does not fit its tool (a wrong type, a missing field) is answered with an
/// error result in the next request, without asking or running anything, and the turn goes on:
/// the well-formed call beside it runs.
#[tokio::test]
async fn malformed_input_is_an_error_result_and_the_turn_goes_on() {
    let mut step = Step::default();
    for (id, name, input) in [
        ("toolu_type", "read", json!({"path": 42})),
        ("toolu_missing", "write", json!({"path": "a.txt"})),
        ("toolu_fine", "read", json!({"path": "one.txt"})),
        // Not JSON at all: a call cut off midway.
        ("toolu_cut", "read", json!("{\"path\": \"one.t")),
    ] {
        step.response.tool_calls.push(larik_core::replay::RecordedToolCall {
            id: Some(id.into()),
            name: name.into(),
            input,
        });
    }
    let (sandbox, mock, mut agent, session) = start(vec![step, Step::text("Fixed my input.")]).await;
    std::fs::write(sandbox.project.path().join("one.txt"), "content of one\n").unwrap();
    let (response, updates) = agent.prompt(&session, "read", |params| panic!("nothing asks: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(message_text(&updates), "Fixed my input.");
    assert!(!sandbox.project.path().join("a.txt").exists(), "the write with no content did not run");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "one request carries every result");
    let results = tool_results(&requests[1]);
    let text = |index: usize| results[index]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(results[0]["is_error"], true, "{}", results[0]);
    assert!(text(0).contains("invalid input for read: invalid type"), "{}", text(0));
    assert_eq!(results[1]["is_error"], true, "{}", results[1]);
    assert!(text(1).contains("invalid input for write: missing field `content`"), "{}", text(1));
    assert_eq!(results[2]["is_error"], false);
    assert!(text(2).contains("content of one"), "{}", text(2));
    assert_eq!(results[3]["is_error"], true, "{}", results[3]);
    assert!(text(3).contains("invalid input for read: the input is not valid JSON: {\"path\": \"one.t"), "{}", text(3));
    // The cut-off call goes back to the model as an empty object, which the API accepts.
    let calls: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().into_iter().flatten())
        .filter(|part| part["type"] == "tool_use")
        .collect();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[3]["input"], json!({}), "{}", calls[3]);
}

#[tokio::test]
async fn cancel_mid_stream_answers_cancelled() {
    let mut step = Step::text("This answer is long and will be interrupted before it ends.");
    step.chunk_chars = Some(4);
    step.chunk_delay_ms = 20;
    step.hang = true;
    let (_sandbox, mock, mut agent, session) = start(vec![step, Step::text("Fresh answer.")]).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "talk"}]}))
        .await;
    agent.first_text().await;
    agent.notify("session/cancel", json!({"sessionId": session})).await;
    let (response, _) = agent.response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled");
    // The session is still usable, and the interrupted text is kept in history.
    let (next, updates) = agent.prompt(&session, "again", |_| "reject_once").await;
    assert_eq!(next["result"]["stopReason"], "end_turn");
    assert_eq!(message_text(&updates), "Fresh answer.");
    let second = &mock.requests()[1];
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "user, partial assistant, user: {messages:?}");
    assert!(messages[1]["content"][0]["text"].as_str().unwrap().starts_with("This"));
}

#[tokio::test]
async fn cancel_mid_bash_kills_the_command() {
    let sandbox = Sandbox::new();
    let marker = sandbox.project_path().join("finished");
    let command = format!("echo started; sleep 5; touch {}", marker.display());
    let mock = MockLlm::start(Scenario { responses: vec![Step::tool("toolu_b", "bash", json!({"command": command}))] })
        .await
        .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "run"}]}))
        .await;
    agent.until_tool_runs().await;
    agent.notify("session/cancel", json!({"sessionId": session})).await;
    let (response, seen) = agent.response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled");
    let failed = seen
        .iter()
        .find(|message| message["params"]["update"]["status"] == "failed")
        .expect("the bash call ends failed");
    assert!(failed.to_string().contains("cancelled by the user"), "{failed}");
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert!(!marker.exists(), "the command was killed, not left running");
}

#[tokio::test]
async fn cancel_while_a_permission_prompt_is_open() {
    let (_sandbox, _mock, mut agent, session) =
        start(vec![Step::tool("toolu_w", "write", json!({"path": "a.txt", "content": "a"}))]).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "run"}]}))
        .await;
    let permission = agent.next_with_method("session/request_permission").await;
    agent.notify("session/cancel", json!({"sessionId": session})).await;
    agent.reply(&permission, json!({"outcome": {"outcome": "cancelled"}})).await;
    let (response, seen) = agent.response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled");
    // The client settles an open prompt itself after session/cancel; it is not told again.
    assert!(!seen.iter().any(|message| message["method"] == "$/cancel_request"), "{seen:?}");
}

/// `$/cancel_request` for the prompt itself while a permission request is open: the client did
/// not cancel the session's turn, so nothing else would close its question, and the agent
/// withdraws it with `$/cancel_request` naming it.
#[tokio::test]
async fn cancelling_the_prompt_request_withdraws_its_open_permission_request() {
    let (sandbox, _mock, mut agent, session) =
        start(vec![Step::tool("toolu_w", "write", json!({"path": "a.txt", "content": "a"}))]).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "run"}]}))
        .await;
    let permission = agent.next_with_method("session/request_permission").await;
    agent.notify("$/cancel_request", json!({"requestId": id})).await;
    let (response, mut seen) = agent.response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    let withdrawn = agent.seen_or_next_with_method(&mut seen, "$/cancel_request").await;
    assert_eq!(withdrawn["params"]["requestId"], permission["id"], "{withdrawn}");
    assert!(!sandbox.project.path().join("a.txt").exists(), "the write did not run");
}

#[tokio::test]
async fn stop_reasons_are_reported_as_they_happen() {
    let mut long = Step::text("cut off");
    long.response.stop_reason = Some(larik_core::replay::ModelStop::MaxTokens);
    let mut refused = Step::text("I can't help with that.");
    refused.response.stop_reason = Some(larik_core::replay::ModelStop::Refusal);
    let (_sandbox, mock, mut agent, session) = start(vec![long, refused, Step::text("ok")]).await;
    let (first, _) = agent.prompt(&session, "one", |_| "reject_once").await;
    assert_eq!(first["result"]["stopReason"], "max_tokens");
    let (second, _) = agent.prompt(&session, "two", |_| "reject_once").await;
    assert_eq!(second["result"]["stopReason"], "refusal");
    agent.prompt(&session, "three", |_| "reject_once").await;
    let third = &mock.requests()[2];
    let texts: Vec<String> = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(!texts.contains(&"two".to_owned()), "a refused prompt is left out of later requests: {texts:?}");
    assert!(texts.contains(&"one".to_owned()));
}

#[tokio::test]
async fn max_turn_requests_stops_a_looping_model() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project.path().join(".larik")).unwrap();
    std::fs::write(sandbox.project.path().join(".larik/settings.json"), r#"{"maxTurnRequests": 2}"#).unwrap();
    std::fs::write(sandbox.project.path().join("a.txt"), "a\n").unwrap();
    let steps = vec![
        Step::tool("t1", "read", json!({"path": "a.txt"})),
        Step::tool("t2", "read", json!({"path": "a.txt"})),
        Step::text("never"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, _) = agent.prompt(&session, "loop", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "max_turn_requests");
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn cancel_request_on_a_prompt_ends_the_turn() {
    let mut step = Step::text("Streaming until someone cancels this request.");
    step.chunk_chars = Some(4);
    step.chunk_delay_ms = 20;
    step.hang = true;
    let (_sandbox, mock, mut agent, session) = start(vec![step]).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "talk"}]}))
        .await;
    agent.first_text().await;
    agent.notify("$/cancel_request", json!({"requestId": id})).await;
    let (response, _) = agent.response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    // The abandoned model stream was closed, not left running.
    let closed = async {
        while mock.disconnects() == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), closed).await.expect("the model stream was dropped");
}

#[tokio::test]
async fn the_todo_list_becomes_the_plan_and_commands_show_their_output() {
    let todos = json!({"todos": [
        {"content": "Reproduce the bug", "status": "completed"},
        {"content": "Fix it", "status": "in_progress", "priority": "high"}
    ]});
    let steps = vec![
        Step::tool("toolu_t", "todo", todos),
        Step::tool("toolu_b", "bash", json!({"command": "echo out; echo err >&2; exit 3", "description": "Try it"})),
        Step::text("Done."),
    ];
    let (_sandbox, _mock, mut agent, session) = start(steps).await;
    let (response, updates) = agent.prompt(&session, "plan it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let plan = updates_of(&updates, "plan");
    assert_eq!(plan.len(), 1);
    assert_eq!(
        plan[0]["entries"][0],
        json!({"content": "Reproduce the bug", "priority": "medium", "status": "completed"})
    );
    assert_eq!(plan[0]["entries"][1]["status"], "in_progress");
    assert!(
        updates.iter().all(|update| update["toolCallId"] != "toolu_t"),
        "the plan is shown once, as the plan, not also as a tool call"
    );
    let bash_call =
        updates_of(&updates, "tool_call").into_iter().find(|call| call["toolCallId"] == "toolu_b").unwrap().clone();
    assert_eq!(
        (bash_call["kind"].as_str(), bash_call["title"].as_str()),
        (Some("execute"), Some("Try it (`echo out; echo err >&2; exit 3`)"))
    );
    let finished = updates_of(&updates, "tool_call_update")
        .into_iter()
        .find(|update| update["toolCallId"] == "toolu_b" && update["status"] == "failed")
        .unwrap()
        .clone();
    let shown = finished["content"][0]["content"]["text"].as_str().unwrap();
    assert_eq!(shown, "```sh\n$ echo out; echo err >&2; exit 3\nout\nerr\n\n[exit code 3]\n```");
}

#[tokio::test]
async fn the_plan_does_not_wait_behind_a_permission_prompt() {
    let todos = json!({"todos": [{"content": "Write the file", "status": "in_progress"}]});
    let mut both = Step::tool("toolu_t", "todo", todos);
    both.response.tool_calls.push(larik_core::replay::RecordedToolCall {
        id: Some("toolu_w".into()),
        name: "write".into(),
        input: json!({"path": "a.txt", "content": "a"}),
    });
    let (_sandbox, _mock, mut agent, session) = start(vec![both, Step::text("Done.")]).await;
    let (_, updates) = agent.prompt(&session, "plan and write", |_| "allow_once").await;
    let position = |kind: &str| {
        updates
            .iter()
            .position(|update| update["sessionUpdate"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {updates:?}"))
    };
    assert!(position("plan") < position("_permission_asked"), "the plan came before the write's prompt: {updates:?}");
}

#[tokio::test]
async fn usage_is_reported_after_each_model_response() {
    let (_sandbox, _mock, mut agent, session) = start(vec![Step::text("hi")]).await;
    let (_, updates) = agent.prompt(&session, "hello", |_| "reject_once").await;
    let usage = updates_of(&updates, "usage_update");
    assert_eq!(usage.len(), 1);
    // The mock reports 100 tokens in and 42 out; claude models have a 200k window.
    assert_eq!((usage[0]["used"].as_u64(), usage[0]["size"].as_u64()), (Some(142), Some(200_000)));
    assert!(usage[0].get("cost").is_none(), "no price is guessed for an unknown model");
}
