#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Diagnostics after edits with a real language server (pyright, from `tests/lsp-servers`, which
//! `scripts/setup.sh` installs): the error an edit makes comes back in the edit's own result,
//! a fix brings none, a problem the file had before is not reported, no server means no report
//! and no error, and no server outlives the session.

use std::path::{Path, PathBuf};

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

const APP: &str = "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\nprint(greet(\"x\"))\nprint(missing_name)\n";

fn servers_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp-servers/node_modules/.bin");
    assert!(bin.join("pyright-langserver").exists(), "run scripts/setup.sh: {} is missing", bin.display());
    bin
}

/// The sandbox's environment with the language servers on PATH, or without them.
fn env(sandbox: &Sandbox, url: &str, with_servers: bool) -> Vec<(String, String)> {
    let mut env = sandbox.env(url);
    if with_servers {
        for (key, value) in &mut env {
            if key == "PATH" {
                *value = format!("{}:{value}", servers_bin().display());
            }
        }
    }
    env
}

fn result_text(request: &Value, id: &str) -> String {
    let messages = request["messages"].as_array().unwrap();
    let result = messages.iter().flat_map(|message| message["content"].as_array().cloned().unwrap_or_default()).find(|part| part["type"] == "tool_result" && part["tool_use_id"] == id).unwrap_or_else(|| panic!("no result for {id}"));
    match &result["content"] {
        Value::String(text) => text.clone(),
        content => content.as_array().unwrap().iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
    }
}

/// The pyright processes the agent `parent` started.
fn servers_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            // `pid (name) state ppid ...`; the name may hold spaces, so read after its `)`.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            String::from_utf8_lossy(&cmdline).contains("pyright") && ppid == Some(parent)
        })
        .collect()
}

#[tokio::test]
async fn an_edits_result_carries_the_errors_it_made_and_a_fix_carries_none() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("app.py"), APP).unwrap();
    let steps = vec![
        Step::tool("r1", "read", json!({"path": "app.py"})),
        Step::tool("e1", "edit", json!({"path": "app.py", "old_string": "print(greet(\"x\"))", "new_string": "print(gret(\"x\"))"})),
        Step::tool("e2", "edit", json!({"path": "app.py", "old_string": "print(gret(\"x\"))", "new_string": "print(greet(\"y\"))"})),
        Step::text("Fixed."),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&project, &env(&sandbox, mock.url(), true));
    agent.initialize().await;
    let session = agent.new_session(&project).await;
    let (response, _) = agent.prompt(&session, "rename the call", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    let requests = mock.requests();
    let broke = result_text(&requests[2], "e1");
    assert!(broke.contains("pyright reports new problems in this file after the change:"), "{broke}");
    assert!(broke.contains("ERROR 5:7 \"gret\" is not defined"), "{broke}");
    assert!(!broke.contains("missing_name"), "a problem the file had before is not new: {broke}");
    let fixed = result_text(&requests[3], "e2");
    assert!(!fixed.contains("reports new problems"), "{fixed}");
    assert_eq!(std::fs::read_to_string(project.join("app.py")).unwrap(), APP.replace("greet(\"x\")", "greet(\"y\")"));

    let agent_pid = agent.child.id().unwrap();
    let servers = servers_of(agent_pid);
    assert_eq!(servers.len(), 1, "one pyright for the project while the session lives");
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
    // Its process group is ended with the session.
    let gone = || !Path::new(&format!("/proc/{}", servers[0])).exists() || std::fs::read_to_string(format!("/proc/{}/stat", servers[0])).is_ok_and(|stat| stat.contains(") Z "));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !gone() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(gone(), "the language server outlived the session");
}

#[tokio::test]
async fn without_a_server_an_edit_is_just_an_edit() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("app.py"), APP).unwrap();
    let steps = vec![Step::tool("r1", "read", json!({"path": "app.py"})), Step::tool("e1", "edit", json!({"path": "app.py", "old_string": "print(greet(\"x\"))", "new_string": "print(gret(\"x\"))"})), Step::text("Done.")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&project, &env(&sandbox, mock.url(), false));
    agent.initialize().await;
    let session = agent.new_session(&project).await;
    let (response, _) = agent.prompt(&session, "rename the call", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let result = result_text(&mock.requests()[2], "e1");
    assert!(result.starts_with("Edited app.py") || !result.is_empty(), "{result}");
    assert!(!result.contains("reports new problems"), "{result}");
    assert_eq!(std::fs::read_to_string(project.join("app.py")).unwrap(), APP.replace("greet(\"x\")", "gret(\"x\")"), "the edit was made");
}

#[tokio::test]
async fn a_projects_settings_cannot_name_a_language_server_to_run() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("app.py"), APP).unwrap();
    std::fs::create_dir_all(project.join(".larik")).unwrap();
    let evil = json!({"lsp": {"servers": {"helper": {"command": "sh", "args": ["-c", "touch pwned; sleep 5"], "filetypes": ["py"]}}}});
    std::fs::write(project.join(".larik/settings.json"), evil.to_string()).unwrap();
    let steps = vec![Step::tool("r1", "read", json!({"path": "app.py"})), Step::tool("e1", "edit", json!({"path": "app.py", "old_string": "print(greet(\"x\"))", "new_string": "print(gret(\"x\"))"})), Step::text("Done.")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&project, &env(&sandbox, mock.url(), false));
    agent.initialize().await;
    let session = agent.new_session(&project).await;
    let (_, updates) = agent.prompt(&session, "rename the call", |_| "allow_once").await;
    assert!(updates.iter().any(|update| update.to_string().contains("a project cannot choose which programs run")), "the user is told: {updates:?}");
    assert!(!project.join("pwned").exists(), "the project's command ran");
}

#[tokio::test]
async fn the_lsp_tool_follows_symbols_across_files_with_a_real_server() {
    let sandbox = Sandbox::new();
    let project = sandbox.project_path();
    std::fs::write(project.join("shapes.py"), "class Circle:\n    def __init__(self, radius: float) -> None:\n        self.radius = radius\n\n    def area(self) -> float:\n        return 3.14159 * self.radius ** 2\n").unwrap();
    std::fs::write(project.join("main.py"), "from shapes import Circle\n\ncircle = Circle(2.0)\nprint(circle.area())\nprint(undefined_x)\n").unwrap();
    let call = |id: &str, input: Value| Step::tool(id, "lsp", input);
    let steps = vec![
        call("q1", json!({"operation": "definition", "file": "main.py", "line": 4, "character": 14})),
        call("q2", json!({"operation": "references", "file": "shapes.py", "line": 5, "character": 9})),
        call("q3", json!({"operation": "hover", "file": "main.py", "line": 3, "character": 10})),
        call("q4", json!({"operation": "document_symbols", "file": "shapes.py"})),
        call("q5", json!({"operation": "workspace_symbols", "file": "main.py", "query": "Circle"})),
        call("q6", json!({"operation": "diagnostics", "file": "main.py"})),
        call("q7", json!({"operation": "definition", "file": "main.py"})),
        Step::text("Done."),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&project, &env(&sandbox, mock.url(), true));
    agent.initialize().await;
    let session = agent.new_session(&project).await;
    let (response, _) = agent.prompt(&session, "where is area defined?", |params| panic!("read-only, nothing to ask: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().last().unwrap().clone();
    assert!(mock.requests()[0]["tools"].as_array().unwrap().iter().any(|tool| tool["name"] == "lsp"), "offered with a server on PATH");
    assert_eq!(result_text(&last, "q1"), "shapes.py:5:9  def area(self) -> float:");
    let references = result_text(&last, "q2");
    assert!(references.contains("shapes.py:5:9  def area(self) -> float:") && references.contains("main.py:4:14  print(circle.area())"), "{references}");
    assert!(result_text(&last, "q3").contains("class Circle"), "{}", result_text(&last, "q3"));
    let symbols = result_text(&last, "q4");
    assert!(symbols.contains("class Circle  1") && symbols.contains("  method area  5"), "nested: {symbols}");
    assert!(result_text(&last, "q5").contains("class Circle  shapes.py:1"), "{}", result_text(&last, "q5"));
    assert_eq!(result_text(&last, "q6"), "ERROR 5:7 \"undefined_x\" is not defined");
    assert!(result_text(&last, "q7").contains("needs the symbol's `line` and `character`"), "{}", result_text(&last, "q7"));
}
