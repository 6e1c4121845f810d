#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Sessions outlive the process: list, load (with replay), resume, close, delete, across restarts
//! of the binary and after a kill in the middle of a turn.

use larik_tests::harness::{Agent, Sandbox, message_text, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

async fn start(sandbox: &Sandbox, mock: &MockLlm) -> Agent {
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    let init = agent.initialize().await;
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert!(init["agentCapabilities"]["sessionCapabilities"]["list"].is_object());
    agent
}

async fn call(agent: &mut Agent, method: &str, params: Value) -> (Value, Vec<Value>) {
    let id = agent.request(method, params).await;
    agent.response(id).await
}

#[tokio::test]
async fn a_session_is_listed_loaded_with_its_history_and_continued_after_a_restart() {
    let sandbox = Sandbox::new();
    let first = MockLlm::start(Scenario {
        responses: vec![
            Step::tool("toolu_w", "write", json!({"path": "a.txt", "content": "one\n"})),
            Step::text("Wrote a.txt."),
        ],
    })
    .await
    .unwrap();
    let mut agent = start(&sandbox, &first).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (_, updates) = agent.prompt(&session, "Create a.txt with one line\nplease", |_| "allow_once").await;
    let info = updates_of(&updates, "session_info_update");
    assert_eq!(info[0]["title"], "Create a.txt with one line");
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());

    let second = MockLlm::start(Scenario { responses: vec![Step::text("It has one line.")] }).await.unwrap();
    let mut agent = start(&sandbox, &second).await;
    let (listed, _) = call(&mut agent, "session/list", json!({"cwd": sandbox.project_path()})).await;
    let sessions = listed["result"]["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["sessionId"], session);
    assert_eq!(sessions[0]["title"], "Create a.txt with one line");
    assert!(sessions[0]["updatedAt"].as_str().unwrap().ends_with('Z'));

    let (loaded, replayed) = call(
        &mut agent,
        "session/load",
        json!({"sessionId": session, "cwd": sandbox.project_path(), "mcpServers": []}),
    )
    .await;
    assert!(loaded["result"]["modes"].is_object(), "{loaded}");
    let replayed: Vec<Value> = replayed.iter().map(|message| message["params"]["update"].clone()).collect();
    let kinds: Vec<&str> = replayed.iter().map(|update| update["sessionUpdate"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["session_info_update", "user_message_chunk", "tool_call", "agent_message_chunk"],
        "{replayed:?}"
    );
    assert_eq!(replayed[1]["content"]["text"], "Create a.txt with one line\nplease");
    assert_eq!(replayed[2]["status"], "completed");
    assert_eq!(replayed[2]["content"][0]["newText"], "one\n");
    assert_eq!(replayed[3]["content"]["text"], "Wrote a.txt.");

    let (_, updates) = agent.prompt(&session, "How many lines?", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "It has one line.");
    let messages = second.requests()[0]["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 5, "the model sees the whole earlier conversation: {messages:?}");
    assert_eq!(messages[4]["content"][0]["text"], "How many lines?");
}

#[tokio::test]
async fn resume_does_not_replay_and_close_and_delete_end_a_session() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("first"), Step::text("second")] }).await.unwrap();
    let mut agent = start(&sandbox, &mock).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "one", |_| "reject_once").await;
    let (closed, _) = call(&mut agent, "session/close", json!({"sessionId": session})).await;
    assert!(closed["result"].is_object(), "{closed}");
    let (after_close, _) =
        call(&mut agent, "session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}))
            .await;
    assert_eq!(after_close["error"]["code"], -32002);

    let (resumed, seen) =
        call(&mut agent, "session/resume", json!({"sessionId": session, "cwd": sandbox.project_path()})).await;
    assert!(resumed["result"]["configOptions"].is_array(), "{resumed}");
    assert!(seen.is_empty(), "resume sends no history: {seen:?}");
    agent.prompt(&session, "two", |_| "reject_once").await;
    assert_eq!(mock.requests()[1]["messages"].as_array().unwrap().len(), 3);

    let (deleted, _) = call(&mut agent, "session/delete", json!({"sessionId": session})).await;
    assert!(deleted["result"].is_object());
    let (again, _) = call(&mut agent, "session/delete", json!({"sessionId": session})).await;
    assert!(again["result"].is_object(), "delete is idempotent");
    let (listed, _) = call(&mut agent, "session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"], json!([]));
    let (load_deleted, _) = call(
        &mut agent,
        "session/load",
        json!({"sessionId": session, "cwd": sandbox.project_path(), "mcpServers": []}),
    )
    .await;
    assert_eq!(load_deleted["error"]["code"], -32002);
}

#[tokio::test]
async fn a_kill_mid_turn_leaves_earlier_events_readable() {
    let sandbox = Sandbox::new();
    let mut hanging = Step::text("this never finishes");
    hanging.hang = true;
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("toolu_r", "read", json!({"path": "notes.txt"})), hanging],
    })
    .await
    .unwrap();
    std::fs::write(sandbox.project.path().join("notes.txt"), "remember the milk\n").unwrap();
    let mut agent = start(&sandbox, &mock).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "read my notes"}]}))
        .await;
    loop {
        let message = agent.next().await;
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    agent.child.kill().await.unwrap();

    let fresh = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = start(&sandbox, &fresh).await;
    let (loaded, replayed) = call(
        &mut agent,
        "session/load",
        json!({"sessionId": session, "cwd": sandbox.project_path(), "mcpServers": []}),
    )
    .await;
    assert!(loaded.get("error").is_none(), "{loaded}");
    let updates: Vec<Value> = replayed.iter().map(|message| message["params"]["update"].clone()).collect();
    assert!(
        updates
            .iter()
            .any(|update| update["sessionUpdate"] == "user_message_chunk"
                && update["content"]["text"] == "read my notes")
    );
    let read = updates.iter().find(|update| update["sessionUpdate"] == "tool_call").expect("the finished read is kept");
    assert!(read["content"][0]["content"]["text"].as_str().unwrap().contains("remember the milk"));
}

#[tokio::test]
async fn list_pages_with_a_cursor() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: (0..55).map(|_| Step::text("ok")).collect() }).await.unwrap();
    let mut agent = start(&sandbox, &mock).await;
    for _ in 0..55 {
        let session = agent.new_session(&sandbox.project_path()).await;
        agent.prompt(&session, "hello", |_| "reject_once").await;
    }
    // A session never prompted is not listed.
    agent.new_session(&sandbox.project_path()).await;
    let (first, _) = call(&mut agent, "session/list", json!({})).await;
    assert_eq!(first["result"]["sessions"].as_array().unwrap().len(), 50);
    let cursor = first["result"]["nextCursor"].as_str().expect("a next page").to_owned();
    let (second, _) = call(&mut agent, "session/list", json!({"cursor": cursor})).await;
    assert_eq!(second["result"]["sessions"].as_array().unwrap().len(), 5);
    assert!(second["result"].get("nextCursor").is_none_or(Value::is_null));
    let (bad, _) = call(&mut agent, "session/list", json!({"cursor": "garbage"})).await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test]
async fn replay_gives_back_attached_files_and_tool_locations() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("a.txt"), "one\ntwo\n").unwrap();
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("toolu_r", "read", json!({"path": "a.txt", "offset": 2})), Step::text("ok")],
    })
    .await
    .unwrap();
    let mut agent = start(&sandbox, &mock).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let uri = format!("file://{}/a.txt#L1-2", sandbox.project_path().display());
    let prompt =
        json!([{"type": "text", "text": "see"}, {"type": "resource", "resource": {"uri": uri, "text": "one\ntwo\n"}}]);
    let id = agent.request("session/prompt", json!({"sessionId": session, "prompt": prompt})).await;
    agent.response(id).await;
    let (_, replayed) = call(
        &mut agent,
        "session/load",
        json!({"sessionId": session, "cwd": sandbox.project_path(), "mcpServers": []}),
    )
    .await;
    let updates: Vec<Value> = replayed.iter().map(|message| message["params"]["update"].clone()).collect();
    let attached = updates
        .iter()
        .find(|update| update["content"]["type"] == "resource")
        .expect("the attachment comes back as a resource");
    assert_eq!(attached["content"]["resource"], json!({"uri": uri, "text": "one\ntwo\n"}));
    let read = updates.iter().find(|update| update["sessionUpdate"] == "tool_call").unwrap();
    assert_eq!(read["locations"][0]["line"], 2);
    assert_eq!(read["rawInput"], json!({"path": "a.txt", "offset": 2}));
}

#[tokio::test]
async fn a_fork_has_the_history_so_far_and_a_future_of_its_own() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::text("The parser is in src/parse.rs."),
            Step { when: Some("Write the PR description".into()), ..Step::text("PR: rework the parser.") },
            Step { when: Some("Go on with the lexer".into()), ..Step::text("Lexer next.") },
        ],
    })
    .await
    .unwrap();
    let mut agent = start(&sandbox, &mock).await;
    let init = agent.initialize().await;
    assert!(init["agentCapabilities"]["sessionCapabilities"]["fork"].is_object(), "{init}");
    let source = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&source, "Where is the parser?", |_| "reject_once").await;

    let (forked, after) =
        call(&mut agent, "session/fork", json!({"sessionId": source, "cwd": sandbox.project_path(), "mcpServers": []}))
            .await;
    let fork = forked["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{forked}")).to_owned();
    assert_ne!(fork, source);
    assert!(forked["result"]["modes"].is_object());
    assert!(
        after.iter().all(|message| message["params"]["update"]["sessionUpdate"] != "user_message_chunk"),
        "nothing is replayed: {after:?}"
    );

    let (_, updates) = agent.prompt(&fork, "Write the PR description", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "PR: rework the parser.");
    let (_, updates) = agent.prompt(&source, "Go on with the lexer", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "Lexer next.");
    let requests = mock.requests();
    let texts = |request: &Value| {
        request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|message| message["content"][0]["text"].as_str().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        texts(&requests[1]),
        ["Where is the parser?", "The parser is in src/parse.rs.", "Write the PR description"],
        "the fork has the history"
    );
    assert_eq!(
        texts(&requests[2]),
        ["Where is the parser?", "The parser is in src/parse.rs.", "Go on with the lexer"],
        "the source never sees the fork's turn"
    );

    let (missing, _) = call(
        &mut agent,
        "session/fork",
        json!({"sessionId": "sess_none", "cwd": sandbox.project_path(), "mcpServers": []}),
    )
    .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    // Both are listed, and the fork loads on its own after a restart.
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
    let next = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = start(&sandbox, &next).await;
    let (listed, _) = call(&mut agent, "session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"].as_array().unwrap().len(), 2, "{listed}");
    let (_, replayed) =
        call(&mut agent, "session/load", json!({"sessionId": fork, "cwd": sandbox.project_path(), "mcpServers": []}))
            .await;
    let said: Vec<String> = replayed
        .iter()
        .filter(|message| message["params"]["update"]["sessionUpdate"] == "user_message_chunk")
        .map(|message| message["params"]["update"]["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(said, ["Where is the parser?", "Write the PR description"]);
}

#[tokio::test]
async fn ten_thousand_stored_sessions_list_and_load_and_a_damaged_one_is_skipped() {
    let sandbox = Sandbox::new();
    sandbox.store_sessions(10_000, 1);
    let (dir, cwd) = (sandbox.sessions_dir(), sandbox.project_path());
    // Damaged: not UTF-8 from the first byte, and a torn meta record.
    std::fs::write(dir.join("sess_damaged.jsonl"), [0xff, 0xfe, 0x00, 0x9c, b'\n']).unwrap();
    std::fs::write(dir.join("sess_torn.jsonl"), "{\"type\":\"meta\",\"id\":\"sess_torn\",\"cw").unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("Back again.")] }).await.unwrap();
    let mut agent = start(&sandbox, &mock).await;
    let (listed, _) = call(&mut agent, "session/list", json!({"cwd": cwd})).await;
    let page = listed["result"]["sessions"].as_array().unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(page.len(), 50);
    let (last, _) = call(&mut agent, "session/list", json!({"cwd": cwd, "cursor": "9950"})).await;
    assert_eq!(last["result"]["sessions"].as_array().unwrap().len(), 50, "10,000 listed, the damaged ones left out");
    assert!(last["result"].get("nextCursor").is_none_or(Value::is_null), "{}", last["result"]["nextCursor"]);
    let (loaded, replayed) =
        call(&mut agent, "session/load", json!({"sessionId": "sess_04321", "cwd": cwd, "mcpServers": []})).await;
    assert!(loaded["result"].is_object(), "{loaded}");
    assert!(replayed.iter().any(|message| message["params"]["update"]["content"]["text"] == "prompt 4321"));
    let (damaged, _) =
        call(&mut agent, "session/load", json!({"sessionId": "sess_damaged", "cwd": cwd, "mcpServers": []})).await;
    assert!(
        damaged["error"].is_object() || damaged["result"].is_object(),
        "answered either way, the agent stays up: {damaged}"
    );
    let (resumed, _) =
        call(&mut agent, "session/resume", json!({"sessionId": "sess_00007", "cwd": cwd, "mcpServers": []})).await;
    assert!(resumed["result"].is_object(), "{resumed}");
    let (_, updates) = agent.prompt("sess_00007", "and now?", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "Back again.");
    assert_eq!(mock.requests()[0]["messages"][0]["content"][0]["text"], "prompt 7");
}

/// A session file written before notes were typed keeps the notes as tagged text. Loaded now,
/// the replay shows what the user sent (their words, the file they attached), not the editor's
/// context or Larik's notes, and the next request sends the old messages as the same bytes, so
/// the provider's cached prefix still holds.
#[tokio::test]
async fn a_session_file_from_before_typed_notes_replays_as_sent_and_continues_with_the_same_bytes() {
    let sandbox = Sandbox::new();
    let (dir, cwd) = (sandbox.sessions_dir(), sandbox.project_path());
    std::fs::create_dir_all(&dir).unwrap();
    let uri = format!("file://{}/a.txt", cwd.display());
    let old_user = [
        "<editor-context>\nActive file: src/main.rs\n</editor-context>".to_owned(),
        "what does a.txt say?".to_owned(),
        format!("<file uri=\"{uri}\">\none\ntwo\n</file>"),
        "<system-note>Plan mode is on.</system-note>".to_owned(),
    ];
    let content: Vec<Value> = old_user.iter().map(|text| json!({"type": "text", "text": text})).collect();
    let lines = [
        json!({"type": "meta", "id": "sess_old", "cwd": cwd, "created_at": 1_780_000_000}),
        json!({"type": "title", "title": "An old session"}),
        json!({"type": "message", "message": {"role": "user", "content": content}}),
        json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "It says one, two."}]}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(dir.join("sess_old.jsonl"), text).unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("Still one, two.")] }).await.unwrap();
    let mut agent = start(&sandbox, &mock).await;
    let (loaded, replayed) =
        call(&mut agent, "session/load", json!({"sessionId": "sess_old", "cwd": cwd, "mcpServers": []})).await;
    assert!(loaded["result"].is_object(), "{loaded}");
    let shown: Vec<Value> = replayed
        .iter()
        .map(|message| message["params"]["update"].clone())
        .filter(|update| update["sessionUpdate"] == "user_message_chunk")
        .map(|update| update["content"].clone())
        .collect();
    assert_eq!(
        shown,
        vec![
            json!({"type": "text", "text": "what does a.txt say?"}),
            json!({"type": "resource", "resource": {"uri": uri, "text": "one\ntwo"}}),
        ],
        "the user's words and attachment, without the editor's context or Larik's note"
    );
    let (_, updates) = agent.prompt("sess_old", "and now?", |_| "reject_once").await;
    assert_eq!(message_text(&updates), "Still one, two.");
    let sent: Vec<Value> = mock.requests()[0]["messages"][0]["content"].as_array().unwrap().clone();
    let sent: Vec<&str> = sent.iter().map(|block| block["text"].as_str().unwrap_or_default()).collect();
    assert_eq!(sent, old_user.iter().map(String::as_str).collect::<Vec<_>>());
}
