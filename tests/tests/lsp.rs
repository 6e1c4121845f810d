#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `larik lsp` against a test client over stdio and the mock model: code actions, commands,
//! progress, edits reviewed hunk by hunk through applyEdit, both permission paths, chat files,
//! cancel.

use larik_tests::harness::Sandbox;
use larik_tests::lsp_client::{LspServer, range};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

const SOURCE: &str = "def total(items):\n    return sum(items) + 1\n";

async fn start(steps: Vec<Step>, settings: Option<Value>) -> (Sandbox, MockLlm, LspServer, String) {
    let sandbox = Sandbox::new();
    if let Some(settings) = settings {
        // The user's own settings: only they may turn the sandbox off.
        sandbox.write_user_settings(&settings);
    }
    std::fs::write(sandbox.project.path().join("calc.py"), SOURCE).unwrap();
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut server = LspServer::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    let capabilities = server.initialize(&sandbox.project_path()).await;
    assert!(capabilities["capabilities"]["codeActionProvider"].is_object());
    let uri = server.open(&sandbox.project_path().join("calc.py"), SOURCE).await;
    (sandbox, mock, server, uri)
}

fn titles(actions: &[Value]) -> Vec<String> {
    actions.iter().map(|action| action["title"].as_str().unwrap().to_owned()).collect()
}

fn last_tool_result(request: &Value) -> String {
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    last["content"][0]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn code_actions_offer_what_fits_the_selection() {
    let (_sandbox, _mock, mut server, uri) = start(vec![], None).await;
    let plain = titles(&server.code_actions(&uri, range(1, 1), json!([])).await);
    assert!(
        plain.contains(&"Larik: explain".to_owned()) && !plain.contains(&"Larik: ask about selection".to_owned()),
        "{plain:?}"
    );
    let selected = titles(&server.code_actions(&uri, range(0, 2), json!([])).await);
    assert!(selected.contains(&"Larik: ask about selection".to_owned()), "{selected:?}");
    let diagnostic = json!([{"range": range(1, 1), "message": "off by one", "source": "pyright"}]);
    let fixing = titles(&server.code_actions(&uri, range(1, 1), diagnostic).await);
    assert!(fixing.contains(&"Larik: fix diagnostics here".to_owned()), "{fixing:?}");
    let id = server.request("shutdown", Value::Null).await;
    server.response(id).await;
    server.notify("exit", Value::Null).await;
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), server.child.wait()).await.unwrap().unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn an_edit_is_offered_hunk_by_hunk_and_applied_with_apply_edit() {
    let steps = vec![
        Step::tool("t1", "read", json!({"path": "calc.py"})),
        Step::tool(
            "t2",
            "edit",
            json!({"path": "calc.py", "old_string": "sum(items) + 1", "new_string": "sum(items)"}),
        ),
        Step::text("done"),
    ];
    let (sandbox, mock, mut server, uri) = start(steps, None).await;
    let actions = server.code_actions(&uri, range(0, 2), json!([])).await;
    let id = server.run_action(&actions, "Larik: ask about selection").await;
    let (response, _) = server.response(id).await;
    assert!(response.get("error").is_none(), "{response}");
    let (diagnostics, seen) = server
        .wait_for(|message| {
            message["method"] == "textDocument/publishDiagnostics" && message.to_string().contains("proposes an edit")
        })
        .await;
    assert_eq!(diagnostics["params"]["diagnostics"][0]["range"]["start"]["line"], 1);
    assert!(
        seen.iter().any(|message| message["method"] == "$/progress" && message["params"]["value"]["kind"] == "begin")
    );
    let offered = server.code_actions(&uri, range(1, 1), json!([])).await;
    assert!(titles(&offered).contains(&"Larik: reject".to_owned()));
    // The action says what it changes, not only how many lines.
    let apply = server.run_action(&offered, "Larik: apply edit (+1 -1): + return sum(items)").await;
    let (edit, _) = server.wait_for(|message| message["method"] == "workspace/applyEdit").await;
    let change = &edit["params"]["edit"]["changes"][&uri][0];
    assert_eq!(change["range"], range(1, 2));
    assert_eq!(change["newText"], "    return sum(items)\n");
    server.reply(&edit, json!({"applied": true})).await;
    server.response(apply).await;
    // The edit is in the buffer only: the turn waits for the user to save it, and says so,
    // because what runs next reads the disk.
    let (waiting, _) = server.wait_for(|message| message["method"] == "window/showMessage").await;
    assert!(waiting["params"]["message"].as_str().unwrap().contains("waits for you to save calc.py"), "{waiting}");
    let path = sandbox.project.path().join("calc.py");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), SOURCE, "written behind the editor's back");
    assert_eq!(mock.requests().len(), 2, "the turn went on before the edit was saved");
    std::fs::write(&path, SOURCE.replace("sum(items) + 1", "sum(items)")).unwrap();
    server.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
    let (message, _) = server.wait_for(|message| message["method"] == "window/showMessage").await;
    assert_eq!(message["params"]["message"], "Larik: done");
    let told = last_tool_result(&mock.requests()[2]);
    assert!(told.contains("applied all of it"), "{told}");
    let first_prompt = mock.requests()[0]["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(first_prompt.contains("return sum(items) + 1"), "the selection went with the question: {first_prompt}");
}

#[tokio::test]
async fn permission_questions_use_show_message_request() {
    let steps = vec![Step::tool("t1", "bash", json!({"command": "printf from-bash"})), Step::text("ran it")];
    let (_sandbox, mock, mut server, uri) = start(steps, Some(json!({"sandbox": {"enabled": false}}))).await;
    let actions = server.code_actions(&uri, range(0, 0), json!([])).await;
    server.run_action(&actions, "Larik: explain").await;
    let (question, _) = server.wait_for(|message| message["method"] == "window/showMessageRequest").await;
    let choices: Vec<&str> = question["params"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|action| action["title"].as_str().unwrap())
        .collect();
    assert_eq!(choices[0], "Allow once");
    assert!(
        choices[1].starts_with("Always allow `bash(printf") && choices[1].ends_with("in this project"),
        "{choices:?}"
    );
    server.reply(&question, json!({"title": "Allow once"})).await;
    server.wait_for(|message| message["method"] == "window/showMessage").await;
    assert!(last_tool_result(&mock.requests()[1]).contains("from-bash"));
}

#[tokio::test]
async fn without_show_message_request_the_question_becomes_code_actions() {
    let steps = vec![Step::tool("t1", "bash", json!({"command": "printf from-bash"})), Step::text("ran it")];
    let (_sandbox, mock, mut server, uri) = start(steps, Some(json!({"sandbox": {"enabled": false}}))).await;
    let actions = server.code_actions(&uri, range(0, 0), json!([])).await;
    server.run_action(&actions, "Larik: explain").await;
    let (question, _) = server.wait_for(|message| message["method"] == "window/showMessageRequest").await;
    server.reply_error(&question, -32601, "Method not found").await;
    let (hint, _) = server
        .wait_for(|message| {
            message["method"] == "textDocument/publishDiagnostics" && message.to_string().contains("Larik asks")
        })
        .await;
    assert_eq!(hint["params"]["uri"], uri);
    let offered = server.code_actions(&uri, range(0, 0), json!([])).await;
    server.run_action(&offered, "Larik: Allow once").await;
    server.wait_for(|message| message["method"] == "window/showMessage").await;
    assert!(last_tool_result(&mock.requests()[1]).contains("from-bash"), "the request was not lost");
}

#[tokio::test]
async fn a_chat_file_gets_the_reply_appended() {
    let (sandbox, mock, mut server, _) = start(vec![Step::text("Hello there, human.")], None).await;
    let chat_path = sandbox.project_path().join("notes.larik.md");
    let text = "# Chat\n\n## You\n\nSay hello\n";
    std::fs::write(&chat_path, text).unwrap();
    let chat = server.open(&chat_path, text).await;
    let actions = server.code_actions(&chat, range(0, 0), json!([])).await;
    let send = server.run_action(&actions, "Larik: send").await;
    server.response(send).await;
    let during = titles(&server.code_actions(&chat, range(0, 0), json!([])).await);
    assert!(!during.contains(&"Larik: send".to_owned()), "a second send is offered mid-turn: {during:?}");
    let mut appended = String::new();
    while !appended.contains("## You") {
        let (edit, _) = server.wait_for(|message| message["method"] == "workspace/applyEdit").await;
        let change = edit["params"]["edit"]["changes"][&chat][0].clone();
        appended.push_str(change["newText"].as_str().unwrap());
        server.reply(&edit, json!({"applied": true})).await;
    }
    // The reply follows the file's own headings: the user's `## You` comes back for the next message.
    assert_eq!(appended, "\n## Larik\n\nHello there, human.\n\n## You\n\n");
    assert_eq!(mock.requests()[0]["messages"][0]["content"][0]["text"], "Say hello");
}

#[tokio::test]
async fn a_built_in_command_in_a_chat_file_is_answered_there_without_the_model() {
    let (sandbox, mock, mut server, _) = start(vec![], None).await;
    let chat_path = sandbox.project_path().join("notes.larik.md");
    let text = "# Chat\n\n## You\n\n/checkpoints\n";
    std::fs::write(&chat_path, text).unwrap();
    let chat = server.open(&chat_path, text).await;
    let actions = server.code_actions(&chat, range(0, 0), json!([])).await;
    let send = server.run_action(&actions, "Larik: send").await;
    server.response(send).await;
    let mut appended = String::new();
    while !appended.contains("## You") {
        let (edit, _) = server.wait_for(|message| message["method"] == "workspace/applyEdit").await;
        appended.push_str(edit["params"]["edit"]["changes"][&chat][0]["newText"].as_str().unwrap());
        server.reply(&edit, json!({"applied": true})).await;
    }
    assert_eq!(appended, "\n## Larik\n\nNo checkpoints: no turn of this session has changed a file yet.\n\n## You\n\n");
    assert!(mock.requests().is_empty(), "a built-in command is not a prompt");
}

#[tokio::test]
async fn cancel_ends_a_running_turn() {
    let mut hanging = Step::text("thinking out loud forever");
    hanging.hang = true;
    let (_sandbox, _mock, mut server, uri) = start(vec![hanging], None).await;
    let actions = server.code_actions(&uri, range(0, 0), json!([])).await;
    server.run_action(&actions, "Larik: explain").await;
    server
        .wait_for(|message| message["method"] == "$/progress" && message["params"]["value"]["kind"] == "report")
        .await;
    let id = server.request("workspace/executeCommand", json!({"command": "larik.cancel", "arguments": []})).await;
    server.response(id).await;
    let (end, _) = server
        .wait_for(|message| message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end")
        .await;
    assert_eq!(end["params"]["value"]["message"], "done");
}

#[tokio::test]
async fn commands_without_arguments_still_do_something_useful() {
    let (_sandbox, _mock, mut server, _) = start(vec![], None).await;
    let shown = |seen: &[Value]| {
        seen.iter()
            .find(|message| message["method"] == "window/showMessage")
            .map(|message| message["params"]["message"].as_str().unwrap_or_default().to_owned())
    };
    let id = server.request("workspace/executeCommand", json!({"command": "larik.mode"})).await;
    let (reply, seen) = server.response(id).await;
    assert!(reply.get("error").is_none(), "{reply}");
    assert_eq!(
        shown(&seen).as_deref(),
        Some("Larik: mode is now accept-edits"),
        "without an argument the mode moves on"
    );
    let id = server.request("workspace/executeCommand", json!({"command": "larik.ask"})).await;
    let (_, seen) = server.response(id).await;
    assert!(shown(&seen).unwrap_or_default().contains("chat file"));
}

#[tokio::test]
async fn a_chat_file_offers_the_skills_and_runs_one_typed_as_the_message() {
    let sandbox = Sandbox::new();
    let skill = sandbox.home.path().join(".claude/skills/code-review");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\ndescription: Review a change for correctness, tests and style before it is merged\nargument-hint: [path]\n---\nReview $ARGUMENTS against the checklist.\n").unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("No findings."), Step::text("Still none.")] })
        .await
        .unwrap();
    let mut server = LspServer::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    server.initialize(&sandbox.project_path()).await;
    let chat_path = sandbox.project_path().join("review.larik.md");
    let text = "# Chat\n\n## You\n\n/code-review calc.py\n";
    std::fs::write(&chat_path, text).unwrap();
    let chat = server.open(&chat_path, text).await;
    let actions = server.code_actions(&chat, range(0, 0), json!([])).await;
    let offered = titles(&actions);
    // Cut to fit Helix's code-action menu (52 characters); the description says the rest.
    assert!(offered.contains(&"Larik: /code-review — Review a change for correctne…".to_owned()), "{offered:?}");
    let send = server.run_action(&actions, "Larik: send").await;
    server.response(send).await;
    // The reply is written into the chat file, edit by edit, until the turn ends.
    loop {
        let (message, _) = server
            .wait_for(|message| {
                message["method"] == "workspace/applyEdit"
                    || (message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end")
            })
            .await;
        if message["method"] != "workspace/applyEdit" {
            break;
        }
        server.reply(&message, json!({"applied": true})).await;
    }
    assert_eq!(mock.requests()[0]["messages"][0]["content"][0]["text"], "Review calc.py against the checklist.");
    // The code action runs it with no arguments.
    let actions = server.code_actions(&chat, range(0, 0), json!([])).await;
    let run = server.run_action(&actions, "Larik: /code-review — Review a change for correctne…").await;
    server.response(run).await;
    server.wait_for(|message| message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end").await;
    assert!(mock.requests()[1].to_string().contains("Review  against the checklist."), "{}", mock.requests()[1]);
}

/// The byte offset of an LSP position (UTF-16 columns) in `text`.
fn offset(text: &str, position: &Value) -> usize {
    let (line, character) =
        (position["line"].as_u64().unwrap() as usize, position["character"].as_u64().unwrap() as usize);
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    let rest = &text[start..];
    for (index, c) in rest.char_indices() {
        if units >= character || c == '\n' {
            return start + index;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// The chat file as the editor holds it once the reply ended: every `workspace/applyEdit`
/// applied where it says, as Helix does.
async fn chat_after_reply(server: &mut LspServer, chat: &str, mut text: String) -> String {
    loop {
        let (edit, _) = server.wait_for(|message| message["method"] == "workspace/applyEdit").await;
        let change = edit["params"]["edit"]["changes"][chat][0].clone();
        let (start, end) = (offset(&text, &change["range"]["start"]), offset(&text, &change["range"]["end"]));
        text.replace_range(start..end, change["newText"].as_str().unwrap());
        server.reply(&edit, json!({"applied": true})).await;
        if text.matches("## You").count() >= 2 && text.ends_with("## You\n\n") {
            return text;
        }
    }
}

#[tokio::test]
async fn a_chat_files_plan_is_one_line_rewritten_in_place_as_plain_text() {
    let plan = |read: &str, fix: &str| json!({"todos": [{"content": "Read calc.py", "status": read}, {"content": "Fix total", "status": fix}]});
    let mut reading = Step::tool("t2", "read", json!({"path": "calc.py"}));
    reading.response.text = Some("Reading it first.".into());
    let steps = vec![
        Step::tool("t1", "todo", plan("in_progress", "pending")),
        reading,
        Step::tool("t3", "todo", plan("completed", "in_progress")),
        Step::text("The plan moved on."),
    ];
    let (sandbox, _mock, mut server, _) = start(steps, None).await;
    let chat_path = sandbox.project_path().join("notes.larik.md");
    let text = "# Chat\n\n## You\n\nFix calc.py\n";
    std::fs::write(&chat_path, text).unwrap();
    let chat = server.open(&chat_path, text).await;
    let actions = server.code_actions(&chat, range(0, 0), json!([])).await;
    let send = server.run_action(&actions, "Larik: send").await;
    server.response(send).await;
    let reply = chat_after_reply(&mut server, &chat, text.to_owned()).await;
    assert_eq!(reply.matches("- Plan:").count(), 1, "the plan was written again:\n{reply}");
    assert!(reply.contains("- Plan: 1 of 2 done: ✓ Read calc.py · ◐ Fix total\n"), "{reply}");
    let plan_at = reply.find("- Plan:").unwrap();
    assert!(plan_at < reply.find("Reading it first.").unwrap(), "the plan stays where it first stood:\n{reply}");
    assert!(reply.contains("- ✓ Read calc.py (2 lines)"), "{reply}");
    assert!(!reply.contains('`') && !reply.contains("**"), "markup Helix would show raw:\n{reply}");
}
