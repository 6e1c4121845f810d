#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `apply_code_action` against a language server offering actions of every shape
//! (`tests/lsp-servers/code_action_server.py`, the user's own server in settings): an edit the
//! server defers is resolved and applied, an action's command runs after its edit, file
//! creates, renames and deletes are refused, and edit rules decide the action as they decide
//! an edit, for every file it changes.

use std::path::{Path, PathBuf};

use larik_tests::harness::Sandbox;
use larik_tests::mock_llm::Step;
use larik_tests::tasks::{result_of, result_text, start};
use serde_json::{Value, json};

const NOTES: &str = "first\nsecond\n";

/// Configures the code-action server for `.act` files in the user's settings, with
/// `permissions`. Returns the file it records what it was asked in.
fn configure(sandbox: &Sandbox, permissions: Value) -> PathBuf {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp-servers/code_action_server.py");
    let log = sandbox.home.path().join("actions.log");
    sandbox.write_user_settings(&json!({
        "permissions": permissions,
        "lsp": {"servers": {"actlint": {"command": "python3", "args": [server, log], "filetypes": ["act:act"]}}}
    }));
    log
}

fn apply(id: &str, file: &str, title: &str) -> Step {
    Step::tool(id, "apply_code_action", json!({"file": file, "line": 1, "title": title}))
}

#[tokio::test]
async fn a_deferred_edit_is_resolved_and_an_actions_command_runs_after_its_edit() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("notes.act"), NOTES).unwrap();
    let log = configure(&sandbox, json!({}));
    let steps = vec![
        Step::tool("r1", "read", json!({"path": "notes.act"})),
        apply("a1", "notes.act", "Add a marker later"),
        apply("a2", "notes.act", "Add a checked line"),
        Step::text("Done."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "fix it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().last().unwrap().clone();
    let resolved = result_text(&result_of(&last, "a1"));
    assert!(resolved.starts_with("Applied the code action \"Add a marker later\": changed notes.act."), "{resolved}");
    let checked = result_text(&result_of(&last, "a2"));
    assert!(checked.contains("Its command `act.check` ran."), "{checked}");
    assert_eq!(std::fs::read_to_string(project.join("notes.act")).unwrap(), format!("checked\nresolved\n{NOTES}"));
    let asked = std::fs::read_to_string(&log).unwrap();
    assert!(asked.contains("resolve Add a marker later"), "the edit was not resolved: {asked}");
    // The command ran on the file as the action's edit left it.
    let seen = format!("act.check saw {}", json!(format!("checked\nresolved\n{NOTES}")));
    assert!(asked.lines().any(|line| line == seen), "{asked}");
}

#[tokio::test]
async fn an_action_that_would_create_rename_or_delete_a_file_is_refused() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("notes.act"), NOTES).unwrap();
    configure(&sandbox, json!({}));
    let steps = vec![
        Step::tool("r1", "read", json!({"path": "notes.act"})),
        apply("c1", "notes.act", "Create a file"),
        apply("m1", "notes.act", "Rename the file"),
        apply("d1", "notes.act", "Delete the file"),
        Step::text("Left alone."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "reorganise", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().last().unwrap().clone();
    for (id, kind) in [("c1", "create"), ("m1", "rename"), ("d1", "delete")] {
        let result = result_of(&last, id);
        let text = result_text(&result);
        assert_eq!(result["is_error"], true, "{result}");
        assert!(
            text.contains(&format!("The action would {kind} a file; only edits to existing files are applied.")),
            "{text}"
        );
    }
    assert_eq!(std::fs::read_to_string(project.join("notes.act")).unwrap(), NOTES);
    assert!(!project.join("made.act").exists() && !project.join("renamed.act").exists());
}

#[tokio::test]
async fn edit_rules_deny_or_allow_a_code_action_as_they_do_an_edit() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    for dir in ["locked", "open"] {
        std::fs::create_dir_all(project.join(dir)).unwrap();
        std::fs::write(project.join(dir).join("notes.act"), NOTES).unwrap();
    }
    configure(&sandbox, json!({"deny": ["Edit(locked/**)"], "allow": ["Edit(open/**)"]}));
    let steps = vec![
        Step::tool("r1", "read", json!({"path": "locked/notes.act"})),
        Step::tool("r2", "read", json!({"path": "open/notes.act"})),
        apply("a1", "locked/notes.act", "Add a header"),
        apply("a2", "open/notes.act", "Add a header"),
        // Approved by the rule for the file it names, but its edit reaches into `locked/` too.
        Step::tool("r3", "read", json!({"path": "open/notes.act"})),
        apply("a3", "open/notes.act", "Add a header here and in locked/"),
        Step::text("Done."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let mut asked = Vec::new();
    let (response, _) = agent
        .prompt(&session, "add headers", |params| {
            asked.push(params.clone());
            "reject_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(asked.is_empty(), "a rule decided both, nothing was asked: {asked:?}");
    let last = mock.requests().last().unwrap().clone();
    let denied = result_text(&result_of(&last, "a1"));
    assert!(denied.starts_with("Permission denied"), "{denied}");
    assert_eq!(std::fs::read_to_string(project.join("locked/notes.act")).unwrap(), NOTES);
    let allowed = result_text(&result_of(&last, "a2"));
    assert!(allowed.starts_with("Applied the code action \"Add a header\""), "{allowed}");
    let reaching = result_of(&last, "a3");
    assert_eq!(reaching["is_error"], true, "{reaching}");
    let reaching = result_text(&reaching);
    assert!(
        reaching.contains("locked/notes.act may not be edited: denied by the rule `Edit(locked/**)`"),
        "{reaching}"
    );
    // Nothing of it was written, in either file.
    assert_eq!(std::fs::read_to_string(project.join("open/notes.act")).unwrap(), format!("header\n{NOTES}"));
    assert_eq!(std::fs::read_to_string(project.join("locked/notes.act")).unwrap(), NOTES);
}
