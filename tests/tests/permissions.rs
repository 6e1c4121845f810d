#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Permissions over ACP with the real binary: rules from settings, "always allow" remembered
//! across restarts, and the shell sandbox containing what bash does.

use larik_tests::harness::{Agent, Sandbox, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

fn settings(sandbox: &Sandbox, body: Value) {
    std::fs::create_dir_all(sandbox.project.path().join(".larik")).unwrap();
    std::fs::write(sandbox.project.path().join(".larik/settings.json"), body.to_string()).unwrap();
}

/// The user's own settings file, in the test's private home.
fn user_settings(sandbox: &Sandbox, body: Value) {
    sandbox.write_user_settings(&body);
}

async fn start_agent(sandbox: &Sandbox, mock: &MockLlm) -> (Agent, String) {
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (agent, session)
}

fn tool_result(request: &Value) -> String {
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    last["content"][0]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn always_allow_is_saved_privately_and_used_after_a_restart() {
    let sandbox = Sandbox::new();
    let first = MockLlm::start(Scenario {
        responses: vec![Step::tool("t1", "write", json!({"path": "a.txt", "content": "a"})), Step::text("ok")],
    })
    .await
    .unwrap();
    let (mut agent, session) = start_agent(&sandbox, &first).await;
    let mut asked = 0;
    agent
        .prompt(&session, "write a", |params| {
            asked += 1;
            assert!(params["options"][1]["name"].as_str().unwrap().contains("write"), "{params}");
            "allow_always"
        })
        .await;
    assert_eq!(asked, 1);
    agent.close_stdin();
    agent.wait_exit().await;

    let saved = walk(&sandbox.home.path().join(".config/larik/projects"));
    assert_eq!(saved.len(), 1, "one private settings file: {saved:?}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&saved[0]).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&saved[0]).unwrap().contains("\"write\""));
    assert!(!sandbox.project.path().join(".larik").exists(), "nothing is written into the project");

    let second = MockLlm::start(Scenario {
        responses: vec![Step::tool("t2", "write", json!({"path": "b.txt", "content": "b"})), Step::text("ok")],
    })
    .await
    .unwrap();
    let (mut agent, session) = start_agent(&sandbox, &second).await;
    agent.prompt(&session, "write b", |_| panic!("the saved rule allows it")).await;
    assert_eq!(std::fs::read_to_string(sandbox.project.path().join("b.txt")).unwrap(), "b");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().is_dir() {
            files.extend(walk(&entry.path()));
        } else {
            files.push(entry.path());
        }
    }
    files
}

#[tokio::test]
async fn deny_rules_hold_in_yolo_mode_and_the_model_hears_why() {
    let sandbox = Sandbox::new();
    settings(&sandbox, json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    // Only the user's own settings may start sessions in yolo.
    let user_settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(user_settings.parent().unwrap()).unwrap();
    std::fs::write(user_settings, json!({"permissions": {"defaultMode": "yolo"}}).to_string()).unwrap();
    std::fs::write(sandbox.project.path().join("keep.txt"), "keep").unwrap();
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("t1", "bash", json!({"command": "ls && rm keep.txt"})), Step::text("ok")],
    })
    .await
    .unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    let (_, updates) = agent.prompt(&session, "clean up", |_| panic!("yolo never asks")).await;
    assert!(sandbox.project.path().join("keep.txt").exists());
    assert!(updates_of(&updates, "tool_call_update").iter().any(|update| update["status"] == "failed"));
    let told = tool_result(&mock.requests()[1]);
    assert!(told.contains("denied by the rule `Bash(rm:*)`"), "{told}");
}

#[tokio::test]
async fn without_the_sandbox_bash_asks_and_shows_the_command() {
    let sandbox = Sandbox::new();
    // Only the user may turn the sandbox off (or on).
    user_settings(&sandbox, json!({"sandbox": {"enabled": false}}));
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("t1", "bash", json!({"command": "make --version"})), Step::text("ok")],
    })
    .await
    .unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    let mut asked = Vec::new();
    agent
        .prompt(&session, "build", |params| {
            asked.push(params["toolCall"]["content"][0]["content"]["text"].as_str().unwrap_or_default().to_owned());
            "reject_once"
        })
        .await;
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("$ make --version"), "the prompt shows the command: {asked:?}");
}

#[tokio::test]
async fn the_sandbox_stops_writes_outside_the_project_and_network_connections() {
    if larik_core::sandbox::kernel_support().is_err() {
        // Where the kernel lacks Landlock the agent asks instead; nothing to contain here.
        return;
    }
    let sandbox = Sandbox::new();
    let outside = std::path::PathBuf::from(format!("/var/tmp/larik-sandbox-test-{}", std::process::id()));
    std::fs::create_dir_all(&outside).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        "echo inside > inside.txt && echo written; echo outside > {}/x.txt; exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected",
        outside.display()
    );
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("t1", "bash", json!({"command": command})), Step::text("ok")],
    })
    .await
    .unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    agent.prompt(&session, "try", |_| panic!("sandboxed bash runs without asking")).await;
    let output = tool_result(&mock.requests()[1]);
    let outside_written = outside.join("x.txt").exists();
    let _ = std::fs::remove_dir_all(&outside);
    assert_eq!(std::fs::read_to_string(sandbox.project.path().join("inside.txt")).unwrap(), "inside\n");
    assert!(output.contains("written"), "{output}");
    assert!(!outside_written, "the write outside the project failed: {output}");
    assert!(output.contains("Permission denied"), "the command saw an ordinary error: {output}");
    assert!(!output.contains("connected"), "the connection failed: {output}");
    let accepted = tokio::time::timeout(std::time::Duration::from_millis(300), listener.accept()).await;
    assert!(accepted.is_err(), "nothing reached the listener");
}

#[tokio::test]
async fn read_deny_rules_withhold_mentioned_files() {
    let sandbox = Sandbox::new();
    settings(&sandbox, json!({"permissions": {"deny": ["Read(.env)"]}}));
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok")] }).await.unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    let env_uri = format!("file://{}/.env", sandbox.project_path().display());
    let notes_uri = format!("file://{}/notes.md", sandbox.project_path().display());
    let prompt = json!([
        {"type": "text", "text": "look at these"},
        {"type": "resource", "resource": {"uri": env_uri, "text": "API_KEY=secret"}},
        {"type": "resource", "resource": {"uri": notes_uri, "text": "meeting notes"}}
    ]);
    let id = agent.request("session/prompt", json!({"sessionId": session, "prompt": prompt})).await;
    agent.response(id).await;
    let sent = mock.requests()[0]["messages"][0]["content"].to_string();
    assert!(!sent.contains("API_KEY=secret"), "{sent}");
    assert!(sent.contains("was not attached: denied by the rule `Read(.env)`"), "{sent}");
    assert!(sent.contains("meeting notes"));
}

#[tokio::test]
async fn a_cloned_repository_cannot_start_its_reader_in_yolo_or_accept_edits() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project.path().join(".claude")).unwrap();
    std::fs::write(
        sandbox.project.path().join(".claude/settings.json"),
        r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
    )
    .unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("hi")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (response, _) = agent.response(id).await;
    assert_eq!(response["result"]["modes"]["currentModeId"], "default", "{response}");
    let session = response["result"]["sessionId"].as_str().unwrap().to_owned();
    let (_, updates) = agent.prompt(&session, "hi", |_| "reject_once").await;
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("may only choose default or plan"), "the user hears why: {said}");
}

#[tokio::test]
async fn a_projects_allow_rules_count_only_once_the_user_approved_them() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project.path().join(".claude")).unwrap();
    std::fs::write(
        sandbox.project.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Write", "Bash(curl:*)"]}}"#,
    )
    .unwrap();
    let write = || vec![Step::tool("t1", "write", json!({"path": "a.txt", "content": "a"})), Step::text("ok")];
    // Rejected: the project's rules do not count, so the write itself asks (and is rejected).
    let mock = MockLlm::start(Scenario { responses: write() }).await.unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    let mut asked = Vec::new();
    agent
        .prompt(&session, "write", |params| {
            asked.push(params["toolCall"]["title"].as_str().unwrap_or_default().to_owned());
            "reject_once"
        })
        .await;
    assert_eq!(asked.len(), 2, "first the project's settings, then the write: {asked:?}");
    assert!(asked[0].contains("this project's settings"), "{asked:?}");
    assert!(!sandbox.project.path().join("a.txt").exists());
    agent.close_stdin();
    agent.wait_exit().await;
    // Approved for good: the rule allows the write without a prompt, now and after a restart.
    for answer in ["allow_always", "never asked"] {
        let mock = MockLlm::start(Scenario { responses: write() }).await.unwrap();
        let (mut agent, session) = start_agent(&sandbox, &mock).await;
        let mut asked = 0;
        agent
            .prompt(&session, "write", |_| {
                asked += 1;
                "allow_always"
            })
            .await;
        assert_eq!(asked, usize::from(answer == "allow_always"), "only the project's settings were asked about, once");
        assert_eq!(std::fs::read_to_string(sandbox.project.path().join("a.txt")).unwrap(), "a");
        std::fs::remove_file(sandbox.project.path().join("a.txt")).unwrap();
        agent.close_stdin();
        agent.wait_exit().await;
    }
}

#[tokio::test]
async fn an_always_allow_that_cannot_be_saved_holds_for_the_session_and_says_so() {
    let sandbox = Sandbox::new();
    // Where the rule would be saved is taken by a file: the save fails.
    let config = sandbox.home.path().join(".config/larik");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("projects"), "not a directory").unwrap();
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::tool("t1", "write", json!({"path": "a.txt", "content": "a"})),
            Step::tool("t2", "write", json!({"path": "b.txt", "content": "b"})),
            Step::text("ok"),
        ],
    })
    .await
    .unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    let mut asked = 0;
    let (_, updates) = agent
        .prompt(&session, "write both", |_| {
            asked += 1;
            "allow_always"
        })
        .await;
    assert_eq!(asked, 1, "the rule holds for the rest of the session");
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("is allowed for this session but was not saved"), "{said}");
    for (file, text) in [("a.txt", "a"), ("b.txt", "b")] {
        assert_eq!(std::fs::read_to_string(sandbox.project.path().join(file)).unwrap(), text);
    }
}

/// A `Read(...)` deny rule binds the read tool, not the searches (grep and glob name no file) nor
/// the harmless commands (`cat`, `head`, `tail` run without asking): it keeps a file out of the
/// model's way, it is no boundary for secrets. The reference says so.
#[tokio::test]
async fn read_deny_rules_stop_the_read_tool_but_not_searches_or_cat() {
    let sandbox = Sandbox::new();
    // Without the sandbox, so that only the list of harmless commands lets `cat` run.
    user_settings(&sandbox, json!({"permissions": {"deny": ["Read(secrets.txt)"]}, "sandbox": {"enabled": false}}));
    std::fs::write(sandbox.project.path().join("secrets.txt"), "TOKEN=hunter2\n").unwrap();
    let steps = vec![
        Step::tool("t1", "read", json!({"path": "secrets.txt"})),
        Step::tool("t2", "grep", json!({"pattern": "TOKEN", "output_mode": "content"})),
        Step::tool("t3", "glob", json!({"pattern": "secret*"})),
        Step::tool("t4", "bash", json!({"command": "cat secrets.txt"})),
        Step::tool("t5", "bash", json!({"command": "head -n 1 secrets.txt"})),
        Step::tool("t6", "bash", json!({"command": "tail -n 1 secrets.txt"})),
        Step::text("ok"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let (mut agent, session) = start_agent(&sandbox, &mock).await;
    agent.prompt(&session, "look around", |params| panic!("nothing asks: {params}")).await;
    let results: Vec<String> = mock.requests().iter().skip(1).map(tool_result).collect();
    assert!(results[0].contains("denied by the rule `Read(secrets.txt)`"), "{}", results[0]);
    assert!(!results[0].contains("hunter2"), "{}", results[0]);
    assert!(results[1].contains("secrets.txt") && results[1].contains("TOKEN=hunter2"), "grep: {}", results[1]);
    assert!(results[2].contains("secrets.txt"), "glob: {}", results[2]);
    for (index, command) in [(3, "cat"), (4, "head"), (5, "tail")] {
        assert!(results[index].contains("TOKEN=hunter2"), "{command}: {}", results[index]);
    }
}
