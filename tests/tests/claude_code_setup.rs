#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A Claude Code user's own files, in Claude Code's exact shape under a private HOME, over ACP
//! with the real binary: the policy in `~/.claude/settings.json` holds as it does in Claude
//! Code, and what Larik does not honour is said, not silently dropped.

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::listener::Recorder;
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use larik_tests::turns::rejected_turn;
use serde_json::{Value, json};

/// Writes the user's `~/.claude/settings.json` in this home.
fn users_claude_settings(sandbox: &Sandbox, body: &Value) {
    let dir = sandbox.home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), serde_json::to_string_pretty(body).unwrap()).unwrap();
}

/// One prompt whose turn is `steps`, every permission request rejected.
async fn turn(sandbox: &Sandbox, steps: Vec<Step>) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let turn = rejected_turn(sandbox, &[], steps).await;
    (turn.asked, turn.updates, turn.requests)
}

/// The text of the tool result the `index`th request carried back (its last message).
fn tool_result(requests: &[Value], index: usize) -> String {
    let last = requests[index]["messages"].as_array().unwrap().last().unwrap().clone();
    last["content"][0]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn anthropics_strict_settings_in_the_users_own_claude_file_hold() {
    let sandbox = Sandbox::new();
    // Anthropic's example of a strict settings file, where a user keeps it.
    users_claude_settings(
        &sandbox,
        &json!({
            "permissions": {"ask": ["Bash"], "deny": ["WebSearch", "WebFetch"]},
            "sandbox": {"autoAllowBashIfSandboxed": false}
        }),
    );
    let server = Recorder::start("{}").await;
    let (asked, _, requests) = turn(
        &sandbox,
        vec![
            Step::tool("t1", "bash", json!({"command": "touch made.txt"})),
            Step::tool("t2", "web_fetch", json!({"url": format!("{}/page", server.url())})),
            Step::text("done"),
        ],
    )
    .await;
    assert_eq!(asked.len(), 1, "only the command asked: {asked:?}");
    assert_eq!(asked[0]["toolCall"]["kind"], "execute", "{:?}", asked[0]);
    assert!(!sandbox.project.path().join("made.txt").exists(), "the rejected command did not run");
    assert!(server.received().is_empty(), "web_fetch reached the server: {:?}", server.received());
    let fetched = tool_result(&requests, 2);
    assert!(fetched.contains("denied by the rule `WebFetch`"), "{fetched}");
}

#[tokio::test]
async fn sandboxed_commands_ask_when_the_user_turned_auto_allow_off() {
    // Without the key, the sandbox contains the command and it runs without asking.
    let sandbox = Sandbox::new();
    let steps = || vec![Step::tool("t1", "bash", json!({"command": "touch made.txt"})), Step::text("done")];
    let (asked, _, _) = turn(&sandbox, steps()).await;
    assert!(asked.is_empty(), "a sandboxed command runs unasked by default: {asked:?}");
    assert!(sandbox.project.path().join("made.txt").exists());
    std::fs::remove_file(sandbox.project.path().join("made.txt")).unwrap();
    users_claude_settings(&sandbox, &json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false}}));
    let (asked, _, _) = turn(&sandbox, steps()).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(!sandbox.project.path().join("made.txt").exists());
}

#[tokio::test]
async fn a_key_larik_does_not_honour_is_said_once_not_dropped() {
    let sandbox = Sandbox::new();
    users_claude_settings(
        &sandbox,
        &json!({
            "permissions": {"allow": ["Bash(ls:*)"], "additionalDirectories": ["../docs"]},
            "forceLoginMethod": "claudeai",
            "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"}
        }),
    );
    let (_, updates, _) = turn(&sandbox, vec![Step::text("hello")]).await;
    let said = serde_json::to_string(&updates).unwrap();
    assert_eq!(said.matches("not honoured by Larik").count(), 1, "{said}");
    assert!(said.contains("`forceLoginMethod` is not honoured"), "{said}");
    assert!(said.contains("`../docs` is not a directory; it is left out"), "{said}");
    assert!(!said.contains("statusLine"), "the editor draws the status line: {said}");
}

#[tokio::test]
async fn memory_files_imports_and_rules_reach_the_model_and_nothing_outside_the_project() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    let home = sandbox.home.path();
    let write = |path: &std::path::Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(&home.join(".ssh/id_ed25519"), "PRIVATE KEY");
    write(&home.join(".claude/CLAUDE.md"), "Answer tersely.\n@~/notes/personal.md");
    write(&home.join("notes/personal.md"), "I review on Fridays.");
    write(&home.join(".claude/rules/commits.md"), "Commit messages in the imperative.");
    write(&root.join("CLAUDE.md"), "# Project\nSee @docs/conventions.md and @~/.ssh/id_ed25519.\n`@docs/skipped.md`");
    write(&root.join("docs/conventions.md"), "Use tabs for indentation.");
    write(&root.join("docs/skipped.md"), "NOT IMPORTED");
    write(&root.join("CLAUDE.local.md"), "My sandbox database is on port 5433.");
    write(&root.join(".claude/rules/api.md"), "---\npaths: \"src/api/**\"\n---\nAPI RULE");
    let (_, _, requests) = turn(&sandbox, vec![Step::text("ok")]).await;
    let system = requests[0]["system"].to_string();
    for expected in [
        "Answer tersely.",
        "I review on Fridays.",
        "Commit messages in the imperative.",
        "Use tabs for indentation.",
        "My sandbox database is on port 5433.",
        "@~/.ssh/id_ed25519 was not read: it is outside the project",
    ] {
        assert!(system.contains(expected), "{expected} in {system}");
    }
    for absent in ["PRIVATE KEY", "NOT IMPORTED", "API RULE"] {
        assert!(!system.contains(absent), "{absent} not in {system}");
    }
}

#[tokio::test]
async fn the_users_env_reaches_commands_and_a_repositorys_does_not() {
    let sandbox = Sandbox::new();
    users_claude_settings(&sandbox, &json!({"env": {"LARIK_TEST_GREETING": "hola", "LARIK_TEST_SHARED": "claude"}}));
    sandbox.write_user_settings(&json!({"env": {"LARIK_TEST_SHARED": "larik"}}));
    let project_file = sandbox.project.path().join(".claude/settings.json");
    std::fs::create_dir_all(project_file.parent().unwrap()).unwrap();
    std::fs::write(&project_file, json!({"env": {"LARIK_TEST_FROM_REPO": "planted"}}).to_string()).unwrap();
    let printed = "echo \"[$LARIK_TEST_GREETING|$LARIK_TEST_SHARED|${LARIK_TEST_FROM_REPO:-none}]\"";
    let (asked, _, requests) =
        turn(&sandbox, vec![Step::tool("t1", "bash", json!({"command": printed})), Step::text("done")]).await;
    assert!(asked.is_empty(), "a sandboxed echo runs unasked: {asked:?}");
    let output = tool_result(&requests, 1);
    assert!(output.contains("[hola|larik|none]"), "{output}");
}

#[tokio::test]
async fn a_server_of_mcp_json_the_user_disabled_never_starts_nor_asks() {
    let sandbox = Sandbox::new();
    let started = sandbox.home.path().join("server-started");
    let server = json!({"command": "sh", "args": ["-c", format!("touch {}; sleep 5", started.display())]});
    let mcp_json = json!({"mcpServers": {"notes": server}});
    std::fs::write(sandbox.project.path().join(".mcp.json"), mcp_json.to_string()).unwrap();
    // Without the key, the project's server waits for the user's approval (rejected here).
    let (asked, _, _) = turn(&sandbox, vec![Step::text("hi")]).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    users_claude_settings(&sandbox, &json!({"disabledMcpjsonServers": ["notes"]}));
    let (asked, _, _) = turn(&sandbox, vec![Step::text("hi")]).await;
    assert!(asked.is_empty(), "nothing left to approve: {asked:?}");
    assert!(!started.exists(), "the disabled server never ran");
}

#[tokio::test]
async fn a_project_may_take_yolo_away_and_nothing_gives_it_back() {
    let sandbox = Sandbox::new();
    sandbox.write_user_settings(&json!({"permissions": {"defaultMode": "bypassPermissions"}}));
    let project_file = sandbox.project.path().join(".claude/settings.json");
    std::fs::create_dir_all(project_file.parent().unwrap()).unwrap();
    let narrowing = json!({"permissions": {"disableBypassPermissionsMode": "disable"}});
    std::fs::write(&project_file, narrowing.to_string()).unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (opened, _) = agent.response(id).await;
    let modes = &opened["result"]["modes"];
    assert_eq!(modes["currentModeId"], "default", "{opened}");
    assert!(!modes.to_string().contains("\"yolo\""), "{modes}");
    let session = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let id = agent.request("session/set_mode", json!({"sessionId": session, "modeId": "yolo"})).await;
    let (refused, _) = agent.response(id).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("disableBypassPermissionsMode"), "{refused}");
}
