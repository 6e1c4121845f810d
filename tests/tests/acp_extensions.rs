#![allow(clippy::unwrap_used, clippy::expect_used)]
//! ACP features beyond a plain turn: per-hunk review, the client's file system and terminals, editor context,
//! modes and config options.

use larik_tests::harness::{Agent, Sandbox, message_text, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

async fn start(steps: Vec<Step>, capabilities: Value) -> (Sandbox, MockLlm, Agent, String) {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: steps }).await.expect("mock");
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(capabilities).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (sandbox, mock, agent, session)
}

fn last_tool_result_text(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let content = messages.last().unwrap()["content"].as_array().unwrap();
    let result = content.iter().find(|part| part["type"] == "tool_result").unwrap();
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn accepting_one_hunk_of_two_applies_only_that_hunk() {
    let original = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n";
    let steps = vec![
        Step::tool("toolu_r", "read", json!({"path": "list.txt"})),
        Step::tool(
            "toolu_w",
            "write",
            json!({"path": "list.txt", "content": "alpha\nBETA\ngamma\ndelta\nepsilon\nzeta\nomega\n"}),
        ),
        Step::text("Applied what you accepted."),
    ];
    let (sandbox, mock, mut agent, session) = start(steps, json!({"_meta": {"larik": {"hunkReview": true}}})).await;
    std::fs::write(sandbox.project.path().join("list.txt"), original).unwrap();
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "edit"}]}))
        .await;
    let mut hunks = Value::Null;
    let (response, _) = loop {
        let message = agent.next().await;
        if message["method"] == "session/request_permission" {
            hunks = message["params"]["toolCall"]["_meta"]["larik"]["hunks"].clone();
            let answer = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}, "_meta": {"larik": {"acceptedHunks": [0]}}});
            agent.reply(&message, answer).await;
        } else if message["id"] == json!(id) {
            break (message, ());
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(hunks.as_array().map(Vec::len), Some(2), "{hunks}");
    assert_eq!(hunks[0]["oldText"], "beta\n");
    assert_eq!(hunks[0]["newText"], "BETA\n");
    assert_eq!(hunks[1]["newText"], "omega\n");
    let on_disk = std::fs::read_to_string(sandbox.project.path().join("list.txt")).unwrap();
    assert_eq!(on_disk, "alpha\nBETA\ngamma\ndelta\nepsilon\nzeta\n", "only the accepted hunk landed");
    let told = last_tool_result_text(&mock.requests()[2]);
    assert!(told.contains("Hunk 1 at line 2: applied"), "{told}");
    assert!(told.contains("Hunk 2 at line 6: REJECTED"), "{told}");
}

#[tokio::test]
async fn reads_and_writes_go_through_the_editor_when_it_offers_them() {
    let steps = vec![
        Step::tool("toolu_r", "read", json!({"path": "main.py"})),
        Step::tool(
            "toolu_e",
            "edit",
            json!({"path": "main.py", "old_string": "unsaved = 1", "new_string": "unsaved = 2"}),
        ),
        Step::text("ok"),
    ];
    let (sandbox, mock, mut agent, session) =
        start(steps, json!({"fs": {"readTextFile": true, "writeTextFile": true}})).await;
    let path = sandbox.project_path().join("main.py");
    std::fs::write(&path, "on_disk = 1\n").unwrap();
    let buffer = "unsaved = 1\n";
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}))
        .await;
    let mut written = Vec::new();
    loop {
        let message = agent.next().await;
        match message["method"].as_str() {
            Some("fs/read_text_file") => {
                assert_eq!(message["params"]["path"], path.display().to_string());
                agent.reply(&message, json!({"content": buffer})).await;
            }
            Some("fs/write_text_file") => {
                written.push(message["params"].clone());
                agent.reply(&message, json!({})).await;
            }
            Some("session/request_permission") => {
                agent.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await
            }
            _ if message["id"] == json!(id) => {
                assert_eq!(message["result"]["stopReason"], "end_turn");
                break;
            }
            _ => {}
        }
    }
    let requests = mock.requests();
    assert!(last_tool_result_text(&requests[1]).contains("unsaved = 1"), "the model read the editor's buffer");
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["content"], "unsaved = 2\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "on_disk = 1\n", "the editor, not the agent, wrote the file");
}

#[tokio::test]
async fn a_cancelled_turn_stops_waiting_for_a_write_the_editor_never_answers() {
    let steps = vec![
        Step::tool("toolu_w", "write", json!({"path": "notes.txt", "content": "new\n"})),
        Step::text("never asked for"),
    ];
    let (sandbox, mock, mut agent, session) =
        start(steps, json!({"fs": {"readTextFile": true, "writeTextFile": true}})).await;
    let path = sandbox.project_path().join("notes.txt");
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}))
        .await;
    let mut write_id = None;
    let mut started = None;
    let cancelled_request = loop {
        let message = agent.next().await;
        match message["method"].as_str() {
            Some("session/request_permission") => {
                agent.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await
            }
            // The editor never answers (avante's unsaved buffer); the user gives up.
            Some("fs/write_text_file") => {
                write_id = Some(message["id"].clone());
                agent.notify("session/cancel", json!({"sessionId": session})).await;
            }
            Some("$/cancel_request") => break message["params"]["requestId"].clone(),
            Some("session/update") if message["params"]["update"]["sessionUpdate"] == "tool_call" => {
                started = Some(message["params"]["update"].clone())
            }
            _ if message["id"] == json!(id) && message.get("method").is_none() => {
                panic!("the turn ended before the editor was told to stop: {message}")
            }
            _ => {}
        }
    };
    assert_eq!(started.expect("the call was shown")["status"], "pending", "a new call says it is pending");
    assert_eq!(Some(cancelled_request), write_id, "the unanswered write is the request cancelled");
    let (response, _) = agent.response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    assert!(!path.exists(), "only the editor writes, and it never did");
    assert_eq!(mock.requests().len(), 1, "a cancelled turn asks the model nothing more");
}

#[tokio::test]
async fn editor_context_reaches_the_next_prompt_once() {
    let (sandbox, mock, mut agent, session) = start(vec![Step::text("one"), Step::text("two")], json!({})).await;
    let file = sandbox.project_path().join("app.rs");
    let context = json!({
        "sessionId": session,
        "activeFile": file,
        "selection": {"path": file, "startLine": 3, "endLine": 4, "text": "let answer = 42;"},
        "diagnostics": [{"path": file, "line": 3, "severity": "warning", "message": "unused variable"}]
    });
    agent.notify("_larik/editor_context", context).await;
    agent.prompt(&session, "what is selected?", |_| "reject_once").await;
    agent.prompt(&session, "and now?", |_| "reject_once").await;
    let requests = mock.requests();
    let first = requests[0]["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        first.contains("<editor-context>") && first.contains("let answer = 42;") && first.contains("unused variable"),
        "{first}"
    );
    let second = &requests[1]["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"];
    assert_eq!(second, "and now?", "the context is used once");
}

#[tokio::test]
async fn modes_and_config_options_stay_in_sync_and_plan_mode_refuses_edits() {
    let steps = vec![
        Step::tool("toolu_w", "write", json!({"path": "plan.txt", "content": "x"})),
        Step::text("I will only plan."),
        Step::text("Now doing it."),
    ];
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (created, _) = agent.response(id).await;
    let result = &created["result"];
    let session = result["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(result["modes"]["currentModeId"], "default");
    let mode_ids: Vec<&str> =
        result["modes"]["availableModes"].as_array().unwrap().iter().map(|mode| mode["id"].as_str().unwrap()).collect();
    assert_eq!(mode_ids, ["default", "accept-edits", "plan", "yolo"]);
    assert_eq!(result["configOptions"][0]["id"], "mode");
    assert_eq!(result["configOptions"][1]["category"], "model");
    assert_eq!(result["configOptions"][1]["currentValue"], "claude-mock");

    let id = agent.request("session/set_mode", json!({"sessionId": session, "modeId": "plan"})).await;
    let (reply, seen) = agent.response(id).await;
    assert!(reply.get("error").is_none(), "{reply}");
    let kinds: Vec<&str> = seen
        .iter()
        .filter_map(|message| message["params"]["update"]["sessionUpdate"].as_str())
        .filter(|kind| *kind != "available_commands_update")
        .collect();
    assert_eq!(kinds, ["current_mode_update", "config_option_update"]);
    let options =
        seen.iter().find(|message| message["params"]["update"]["sessionUpdate"] == "config_option_update").unwrap();
    assert_eq!(options["params"]["update"]["configOptions"][0]["currentValue"], "plan");

    let (response, updates) = agent.prompt(&session, "change things", |_| panic!("plan mode never asks")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(!sandbox.project.path().join("plan.txt").exists());
    assert!(updates_of(&updates, "tool_call_update").iter().any(|update| update["status"] == "failed"));
    let requests = mock.requests();
    let user = requests[0]["messages"][0]["content"].to_string();
    assert!(user.contains("Plan mode is on"), "{user}");
    assert!(last_tool_result_text(&requests[1]).contains("plan mode"));

    let id = agent
        .request("session/set_config_option", json!({"sessionId": session, "configId": "mode", "value": "default"}))
        .await;
    let (reply, _) = agent.response(id).await;
    assert_eq!(reply["result"]["configOptions"][0]["currentValue"], "default");
    let (_, updates) = agent.prompt(&session, "go ahead", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "Now doing it.");
    let last = mock.requests()[2]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(last.contains("Plan mode has ended"), "{last}");

    let bad = agent.request("session/set_mode", json!({"sessionId": session, "modeId": "turbo"})).await;
    let (reply, _) = agent.response(bad).await;
    assert_eq!(reply["error"]["code"], -32602);
}

#[tokio::test]
async fn switching_model_changes_the_next_request() {
    let sandbox = Sandbox::new();
    // The user's own list (a project's waits for the user's approval: tests/tests/trust.rs).
    sandbox.write_user_settings(&json!({"models": ["claude-mock", "claude-other"]}));
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("a"), Step::text("b")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "one", |_| "reject_once").await;
    let id = agent
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "model", "value": "claude-other"}),
        )
        .await;
    let (reply, _) = agent.response(id).await;
    assert_eq!(reply["result"]["configOptions"][1]["currentValue"], "claude-other", "{reply}");
    agent.prompt(&session, "two", |_| "reject_once").await;
    let models: Vec<Value> = mock.requests().iter().map(|request| request["model"].clone()).collect();
    assert_eq!(models, [json!("claude-mock"), json!("claude-other")]);
    let unknown = agent
        .request("session/set_config_option", json!({"sessionId": session, "configId": "model", "value": "gpt-9"}))
        .await;
    let (reply, _) = agent.response(unknown).await;
    assert_eq!(reply["error"]["code"], -32602);
}

#[tokio::test]
async fn commands_are_announced_and_run_without_the_model() {
    let steps = vec![Step::text("first answer"), Step::text("Summary: we said hello."), Step::text("after compaction")];
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let announced = agent.announced.clone().expect("commands announced after session/new");
    let names: Vec<&str> = announced["params"]["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|command| command["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "compact",
            "clear",
            "mode",
            "model",
            "mcp",
            "plugin",
            "tasks",
            "budget",
            "undo",
            "checkpoints",
            "sandbox",
            "config"
        ]
    );

    agent.prompt(&session, "hello", |_| "reject_once").await;
    let (response, updates) = agent.prompt(&session, "/mode plan", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(updates_of(&updates, "current_mode_update").len() == 1);
    agent.prompt(&session, "/mode default", |_| "reject_once").await;
    let (_, updates) = agent.prompt(&session, "/compact", |_| "reject_once").await;
    assert!(message_text(&updates).contains("Summary: we said hello."), "{}", message_text(&updates));
    agent.prompt(&session, "go on", |_| "reject_once").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "mode switches never reach the model");
    let compacting = requests[1]["messages"].as_array().unwrap();
    assert_eq!(compacting.len(), 1, "a transcript, not the conversation resent");
    assert!(compacting[0]["content"][0]["text"].as_str().unwrap().contains("USER: hello\n\nASSISTANT: first answer"));
    let after = requests[2]["messages"].as_array().unwrap();
    assert_eq!(after.len(), 3, "the summary replaced the conversation: {after:?}");
    assert!(after[0]["content"][0]["text"].as_str().unwrap().contains("Summary: we said hello."));

    let (_, updates) = agent.prompt(&session, "/clear", |_| "reject_once").await;
    assert!(message_text(&updates).contains("Started over"));
}

#[tokio::test]
async fn config_saves_a_setting_and_applies_the_mode_now() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("planned")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (_, updates) = agent.prompt(&session, "/config mode plan", |_| "reject_once").await;
    assert!(message_text(&updates).contains("Saved mode = \"plan\""), "{}", message_text(&updates));
    assert_eq!(updates_of(&updates, "current_mode_update").len(), 1, "this session switched too");
    let file = sandbox.home.path().join(".config/larik/settings.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["permissions"]["defaultMode"], "plan");
    let (_, updates) = agent.prompt(&session, "/config tokenSaver perhaps", |_| "reject_once").await;
    assert!(message_text(&updates).contains("Nothing was changed"), "{}", message_text(&updates));
    let (_, updates) = agent.prompt(&session, "/config", |_| "reject_once").await;
    let listing = message_text(&updates);
    assert!(listing.lines().any(|line| line.starts_with("mode") && line.contains("\"plan\"")), "{listing}");
    // A new session starts in the saved mode.
    let second = agent.new_session(&sandbox.project_path()).await;
    let (_, updates) = agent.prompt(&second, "/config mode", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "mode = \"plan\"");
    assert!(mock.requests().is_empty(), "settings never reach the model");
}

#[tokio::test]
async fn the_thought_level_option_asks_for_thinking() {
    let (_sandbox, mock, mut agent, session) = start(vec![Step::text("a"), Step::text("b")], json!({})).await;
    agent.prompt(&session, "one", |_| "reject_once").await;
    let id = agent
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "thought_level", "value": "high"}),
        )
        .await;
    let (reply, _) = agent.response(id).await;
    let options = reply["result"]["configOptions"].as_array().unwrap();
    let thought = options.iter().find(|option| option["id"] == "thought_level").unwrap();
    assert_eq!((thought["category"].as_str(), thought["currentValue"].as_str()), (Some("thought_level"), Some("high")));
    agent.prompt(&session, "two", |_| "reject_once").await;
    let requests = mock.requests();
    assert!(requests[0].get("thinking").is_none());
    assert_eq!(requests[1]["thinking"], json!({"type": "enabled", "budget_tokens": 24576}));
    assert!(requests[1]["max_tokens"].as_u64().unwrap() > 24576);
}

#[tokio::test]
async fn authenticate_checks_that_a_key_is_configured() {
    let sandbox = Sandbox::new();
    let mut without = Agent::spawn(&sandbox.project_path(), &sandbox.base_env());
    let init = without.initialize().await;
    assert_eq!(init["authMethods"][0]["id"], "api-key");
    let id = without.request("authenticate", json!({"methodId": "api-key"})).await;
    let (reply, _) = without.response(id).await;
    assert_eq!(reply["error"]["code"], -32000);
    let mock = MockLlm::start(Scenario::default()).await.unwrap();
    let mut with = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    with.initialize().await;
    let id = with.request("authenticate", json!({"methodId": "api-key"})).await;
    let (reply, _) = with.response(id).await;
    assert!(reply["result"].is_object(), "{reply}");
}

#[tokio::test]
async fn steering_reaches_the_running_turn() {
    let mut slow = Step::tool("t1", "read", json!({"path": "a.txt"}));
    slow.chunk_delay_ms = 200;
    let steps = vec![slow, Step::text("Adjusted as you said.")];
    let (sandbox, mock, mut agent, session) = start(steps, json!({})).await;
    std::fs::write(sandbox.project.path().join("a.txt"), "a\n").unwrap();
    let init_meta = {
        let id = agent.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
        agent.response(id).await.0["result"]["_meta"].clone()
    };
    assert_eq!(init_meta["steering"]["supported"], true);
    let idle = agent.request("_session/steering", json!({"sessionId": session, "prompt": "hello"})).await;
    assert_eq!(agent.response(idle).await.0["result"]["outcome"], "promptRequired");
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "read a"}]}))
        .await;
    // The turn has started once the session is named.
    while agent.next().await["params"]["update"]["sessionUpdate"] != "session_info_update" {}
    let steer = agent
        .request(
            "_session/steering",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "also check b.txt"}]}),
        )
        .await;
    let (reply, _) = agent.response(steer).await;
    assert_eq!(reply["result"]["outcome"], "injected");
    let (done, _) = agent.response(prompt).await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let second = mock.requests()[1]["messages"].to_string();
    assert!(second.contains("<user-interjection>also check b.txt</user-interjection>"), "{second}");
}

#[tokio::test]
async fn questions_use_a_form_where_the_client_has_one_and_the_reply_otherwise() {
    let ask = || Step::tool("t1", "ask_user", json!({"question": "Tabs or spaces?", "choices": ["tabs", "spaces"]}));
    let (_sandbox, mock, mut agent, session) =
        start(vec![ask(), Step::text("Tabs it is.")], json!({"elicitation": {"form": {}}})).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "format it"}]}))
        .await;
    let form = loop {
        let message = agent.next().await;
        if message["method"] == "elicitation/create" {
            break message;
        }
    };
    assert_eq!(form["params"]["message"], "Tabs or spaces?");
    assert_eq!(form["params"]["requestedSchema"]["properties"]["answer"]["enum"], json!(["tabs", "spaces"]));
    agent.reply(&form, json!({"action": "accept", "content": {"answer": "tabs"}})).await;
    agent.response(id).await;
    assert_eq!(last_tool_result_text(&mock.requests()[1]), "The user answered: tabs");

    let (_sandbox, mock, mut agent, session) = start(vec![ask(), Step::text("Which do you prefer?")], json!({})).await;
    agent.prompt(&session, "format it", |_| "reject_once").await;
    assert!(last_tool_result_text(&mock.requests()[1]).contains("Ask the user in your reply"));
}

#[tokio::test]
async fn logout_stops_using_the_key_until_authenticate() {
    let (_sandbox, mock, mut agent, session) = start(vec![Step::text("signed in")], json!({})).await;
    let id = agent.request("logout", json!({})).await;
    assert!(agent.response(id).await.0["result"].is_object());
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}))
        .await;
    assert_eq!(agent.response(id).await.0["error"]["code"], -32000);
    assert!(mock.requests().is_empty(), "no model call while signed out");
    let id = agent.request("authenticate", json!({"methodId": "api-key"})).await;
    assert!(agent.response(id).await.0["result"].is_object());
    let (response, updates) = agent.prompt(&session, "hi", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(message_text(&updates), "signed in");
}

#[tokio::test]
async fn a_client_terminal_that_cannot_be_created_leaves_the_command_to_the_agent() {
    let steps = vec![Step::tool("toolu_1", "bash", json!({"command": "echo ran by the agent"})), Step::text("done")];
    let (_sandbox, mock, mut agent, session) = start(steps, json!({"terminal": true})).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "run it"}]}))
        .await;
    let mut asked = Vec::new();
    loop {
        let message = agent.next().await;
        if let Some(method) = message["method"].as_str().filter(|_| message.get("id").is_some()) {
            asked.push(method.to_owned());
            agent.reply_error(&message, -32603, "no terminals today").await;
        } else if message["id"] == json!(id) {
            assert_eq!(message["result"]["stopReason"], "end_turn");
            break;
        }
    }
    assert_eq!(asked, ["terminal/create"], "only the failed create was asked of the client");
    assert_eq!(last_tool_result_text(&mock.requests()[1]), "ran by the agent\n");
}

#[tokio::test]
async fn terminal_output_delta_clients_get_the_output_appended_piece_by_piece() {
    let steps = vec![
        Step::tool("toolu_1", "bash", json!({"command": "echo first; sleep 0.3; echo second"})),
        Step::text("done"),
    ];
    let (_sandbox, _mock, mut agent, session) = start(steps, json!({"_meta": {"terminal_output_delta": true}})).await;
    let (response, updates) = agent.prompt(&session, "run it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let pieces: Vec<String> = updates
        .iter()
        .filter_map(|update| update["_meta"]["terminal_output_delta"]["data"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(pieces, ["first\n", "second\n"], "two pieces, as printed");
    let exit = updates.iter().find_map(|update| update["_meta"].get("terminal_exit")).expect("terminal_exit");
    assert_eq!(exit["exit_code"], 0);
    assert!(
        updates.iter().all(|update| update["_meta"].get("terminal_output").is_none()),
        "only the key the client asked for"
    );
}
