#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Checkpoints and undo against the real binary in a real git repository: a turn that writes a
//! file and runs a command that changes, deletes and creates files is undone whole, the
//! command's changes shown with its call, a hand edit made since kept, the conversation rewound,
//! and the user's repository never touched.

use larik_tests::harness::{Agent, Sandbox, git, message_text, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

async fn call(agent: &mut Agent, method: &str, params: Value) -> (Value, Vec<Value>) {
    let id = agent.request(method, params).await;
    agent.response(id).await
}

#[tokio::test]
async fn undo_restores_what_edits_and_commands_changed_and_keeps_a_hand_edit() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join(".gitignore"), "target/\n__pycache__/\n").unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.join("b.txt"), "two\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "start"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let command = "sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt && mkdir gen && echo 'pub fn d() {}' > gen/d.rs \
         && mkdir -p __pycache__ gen/__pycache__ && echo x > __pycache__/a.pyc && echo y > gen/__pycache__/d.pyc \
         && echo z > gen/__pycache__/e.pyc";
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::tool("toolu_w", "write", json!({"path": "notes.md", "content": "# Notes\n"})),
            Step::tool("toolu_b", "bash", json!({"command": command, "description": "tidy"})),
            Step::text("Tidied."),
            Step::text("Starting again."),
        ],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
    let init = agent.initialize().await;
    assert_eq!(init["agentCapabilities"]["_meta"]["larik"]["checkpoints"], true, "{init}");
    let session = agent.new_session(&root).await;
    let (response, updates) = agent.prompt(&session, "Tidy the project", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    shows_what_the_command_changed(&updates);
    // And the model is told.
    let result = mock.requests()[2].to_string();
    assert!(
        result.contains(
            "[files changed: ~a.txt -b.txt +c.txt +gen/d.rs; ignored by the project: 3 files in `gen/__pycache__/` (2), `__pycache__/` (1)]"
        ),
        "{result}"
    );

    let (listed, _) = call(&mut agent, "_larik/checkpoints", json!({"sessionId": session})).await;
    let checkpoints = listed["result"]["checkpoints"].as_array().unwrap_or_else(|| panic!("{listed}")).clone();
    assert_eq!(checkpoints.len(), 1);
    assert_eq!(checkpoints[0]["prompt"], "Tidy the project");
    assert_eq!(
        checkpoints[0]["files"],
        json!([
            "__pycache__/a.pyc",
            "a.txt",
            "b.txt",
            "c.txt",
            "gen/__pycache__/d.pyc",
            "gen/__pycache__/e.pyc",
            "gen/d.rs",
            "notes.md"
        ])
    );

    // The user changes a file of the turn by hand; undo leaves it and says so.
    std::fs::write(root.join("c.txt"), "mine\n").unwrap();
    let (_, updates) = agent.prompt(&session, "/undo", |_| "allow_once").await;
    let said = message_text(&updates);
    assert!(
        said.contains("Undid the turn \"Tidy the project\"")
            && said.contains("Kept as they are, changed since the turn by someone else: `c.txt`.")
            && said.contains("`__pycache__/a.pyc`"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "two\n", "the file rm deleted is back");
    assert!(!root.join("gen").exists() && !root.join("notes.md").exists(), "what the turn created is gone");
    assert!(!root.join("__pycache__/a.pyc").exists());
    assert_eq!(std::fs::read_to_string(root.join("c.txt")).unwrap(), "mine\n");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "the user's repository is untouched");
    assert_eq!(git(&root, &["status", "--porcelain"]).trim(), "?? c.txt");

    // The conversation went back too: the next request starts from before the turn.
    agent.prompt(&session, "Start again", |_| "allow_once").await;
    let messages = mock.requests()[3]["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let (nothing, _) = call(&mut agent, "_larik/undo", json!({"sessionId": session})).await;
    assert_eq!(nothing["error"]["code"], -32602, "{nothing}");
    assert!(nothing["error"]["message"].as_str().unwrap().contains("nothing to undo"));
}

/// The command's call shows which files it changed, with diffs for the text ones; what the
/// project ignores (bytecode) is one line, counted by directory, without diffs.
fn shows_what_the_command_changed(updates: &[Value]) {
    let finished = updates_of(updates, "tool_call_update")
        .into_iter()
        .rfind(|update| update["toolCallId"] == "toolu_b" && update["status"] == "completed")
        .unwrap_or_else(|| panic!("{updates:?}"))
        .clone();
    let content = finished["content"].as_array().unwrap();
    let summary = content
        .iter()
        .find_map(|block| {
            block["content"]["text"].as_str().filter(|text| text.starts_with("Files the command changed"))
        })
        .unwrap_or_else(|| panic!("{content:?}"));
    for expected in ["changed ", "a.txt", "deleted ", "b.txt", "added ", "c.txt", "gen/d.rs"] {
        assert!(summary.contains(expected), "{summary}");
    }
    assert!(
        summary.ends_with("\nIgnored by the project: 3 files in `gen/__pycache__/` (2), `__pycache__/` (1)"),
        "{summary}"
    );
    assert!(!summary.contains(".pyc"), "{summary}");
    assert!(!content.iter().any(|block| block["path"].as_str().is_some_and(|path| path.ends_with(".pyc"))));
    let diff = content
        .iter()
        .find(|block| block["type"] == "diff" && block["path"].as_str().unwrap().ends_with("a.txt"))
        .unwrap_or_else(|| panic!("{content:?}"));
    assert_eq!((diff["oldText"].as_str(), diff["newText"].as_str()), (Some("one\n"), Some("uno\n")));
    assert!(content.iter().any(|block| block["type"] == "diff"
        && block["path"].as_str().unwrap().ends_with("b.txt")
        && block["oldText"] == "two\n"));
}
