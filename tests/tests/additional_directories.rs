#![allow(clippy::unwrap_used, clippy::expect_used)]
//! More than one directory per session, over ACP with the real binary: Claude Code's
//! `permissions.additionalDirectories` in the user's `~/.claude/settings.json`, and ACP's
//! `additionalDirectories` in `session/new`. The agent's tools and its sandboxed commands write
//! there as in the project, the same paths stay protected in each, and a repository cannot open
//! a directory of its choosing.

use larik_tests::harness::{Agent, Sandbox, git, write_file as write};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

/// The text of the tool result the `index`th request carried back.
fn tool_result(requests: &[Value], index: usize) -> String {
    requests[index]["messages"].as_array().unwrap().last().unwrap()["content"].to_string()
}

/// One prompt in a session opened with `params` beyond `cwd`, every question rejected.
async fn run(sandbox: &Sandbox, params: Value, steps: Vec<Step>) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    let initialized = agent.initialize().await;
    assert_eq!(initialized["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"], json!({}));
    let mut request = json!({"cwd": sandbox.project_path(), "mcpServers": []});
    request.as_object_mut().unwrap().extend(params.as_object().unwrap().clone());
    let id = agent.request("session/new", request).await;
    let (opened, _) = agent.response(id).await;
    let session = opened["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{opened}")).to_owned();
    let (_, asked, updates) = agent.prompt_rejecting(&session, "go").await;
    agent.close_stdin();
    agent.wait_exit().await;
    (asked, updates, mock.requests())
}

#[tokio::test]
async fn the_users_additional_directories_are_worked_in_like_the_project_and_a_repositorys_are_not() {
    let sandbox = Sandbox::new();
    let home = sandbox.home.path();
    // Outside the temporary directory, which sandboxed commands may always write.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let shared = outside.path().join("shared-docs");
    std::fs::create_dir_all(&shared).unwrap();
    git(&shared, &["init", "-q"]);
    let planted = outside.path().join("planted");
    std::fs::create_dir_all(&planted).unwrap();
    write(
        &home.join(".claude/settings.json"),
        &json!({"permissions": {"additionalDirectories": [shared], "defaultMode": "acceptEdits"}}).to_string(),
    );
    write(
        &sandbox.project.path().join(".claude/settings.json"),
        &json!({"permissions": {"additionalDirectories": [planted]}}).to_string(),
    );
    let steps = vec![
        Step::tool("t1", "write", json!({"path": shared.join("notes.md"), "content": "shared notes"})),
        Step::tool("t2", "write", json!({"path": planted.join("notes.md"), "content": "x"})),
        Step::tool("t3", "bash", json!({"command": format!("touch {}/from-bash.txt", shared.display())})),
        Step::tool("t4", "bash", json!({"command": format!("touch {}/from-bash.txt", planted.display())})),
        Step::tool("t5", "write", json!({"path": shared.join(".git/hooks/pre-commit"), "content": "#!/bin/sh\n"})),
        Step::tool(
            "t6",
            "bash",
            json!({"command": format!("printf '#!/bin/sh\\n' > {}/.git/hooks/post-checkout", shared.display())}),
        ),
        // The protected paths' parents cannot be swapped either.
        Step::tool(
            "t7",
            "bash",
            json!({"command": format!("cd {} && mv .git .git-old && mkdir -p .git/hooks && printf '#!/bin/sh\\n' > .git/hooks/pre-push", shared.display())}),
        ),
        Step::text("done"),
    ];
    let (_, updates, requests) = run(&sandbox, json!({}), steps).await;
    assert!(
        !shared.join(".git-old").exists() && !shared.join(".git/hooks/pre-push").exists(),
        "{}",
        tool_result(&requests, 7)
    );

    assert_eq!(
        std::fs::read_to_string(shared.join("notes.md")).unwrap(),
        "shared notes",
        "{}",
        tool_result(&requests, 1)
    );
    assert!(tool_result(&requests, 2).contains("outside the project"), "{}", tool_result(&requests, 2));
    assert!(!planted.join("notes.md").exists(), "a repository opens no directory");
    assert!(shared.join("from-bash.txt").exists(), "a sandboxed command writes there: {}", tool_result(&requests, 3));
    assert!(!planted.join("from-bash.txt").exists(), "nor does a command write where the repository named");
    assert!(tool_result(&requests, 5).contains("protected"), "{}", tool_result(&requests, 5));
    assert!(!shared.join(".git/hooks/pre-commit").exists());
    assert!(!shared.join(".git/hooks/post-checkout").exists(), "{}", tool_result(&requests, 6));
    let system = requests[0]["system"].to_string();
    let real = std::fs::canonicalize(&shared).unwrap();
    assert!(system.contains(&format!("Additional working directories: {}", real.display())), "{system}");
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("`permissions.additionalDirectories` is not honoured by Larik"), "{said}");
}

#[tokio::test]
async fn the_editors_additional_directories_open_with_the_session() {
    let sandbox = Sandbox::new();
    let docs = tempfile::tempdir().unwrap();
    let docs_path = std::fs::canonicalize(docs.path()).unwrap();
    sandbox.write_user_settings(&json!({"permissions": {"defaultMode": "acceptEdits"}}));
    let steps = vec![
        Step::tool("t1", "write", json!({"path": docs_path.join("guide.md"), "content": "a guide"})),
        Step::text("done"),
    ];
    let (asked, _, requests) = run(&sandbox, json!({"additionalDirectories": [docs_path]}), steps).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(
        std::fs::read_to_string(docs_path.join("guide.md")).unwrap(),
        "a guide",
        "{}",
        tool_result(&requests, 1)
    );

    // Without it, the same write is refused; a relative root is refused when the session opens.
    let steps = vec![
        Step::tool("t1", "write", json!({"path": docs_path.join("other.md"), "content": "x"})),
        Step::text("done"),
    ];
    let (_, _, requests) = run(&sandbox, json!({}), steps).await;
    assert!(tool_result(&requests, 1).contains("outside the project"));
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let id = agent
        .request(
            "session/new",
            json!({"cwd": sandbox.project_path(), "mcpServers": [], "additionalDirectories": ["docs"]}),
        )
        .await;
    let (refused, _) = agent.response(id).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("additionalDirectories"), "{refused}");
}
