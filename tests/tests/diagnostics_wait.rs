#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How long an edit waits for its file's new problems: longer while the language server says
//! it is loading (`tests/lsp-servers/loading_server.py`, the user's own server in settings,
//! reports work-done progress and publishes a change's problems only after loading).

use std::path::Path;

use larik_tests::harness::Sandbox;
use larik_tests::mock_llm::Step;
use larik_tests::tasks::{result_of, result_text, start};
use serde_json::json;

#[tokio::test]
async fn an_edit_waits_for_a_server_that_says_it_is_loading() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("notes.slow"), "first\nsecond\n").unwrap();
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp-servers/loading_server.py");
    sandbox.write_user_settings(&json!({"lsp": {"servers": {"slowlint": {
        "command": "python3", "args": [server], "filetypes": ["slow:slow"]
    }}}}));
    let steps = vec![
        // The read warms the server: it has answered for the file once and is no longer new.
        Step::tool("r1", "read", json!({"path": "notes.slow"})),
        Step::tool("e1", "edit", json!({"path": "notes.slow", "old_string": "second", "new_string": "TODO second"})),
        Step::text("Done."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "mark it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    // The server published past the 3 seconds an idle server gets, while its progress said it
    // was loading: the edit's result still carries the problem.
    let result = result_text(&result_of(&mock.requests()[2], "e1"));
    assert!(result.contains("slowlint reports new problems in this file after the change:"), "{result}");
    assert!(result.contains("ERROR 2:1 a TODO is left here"), "{result}");
}
