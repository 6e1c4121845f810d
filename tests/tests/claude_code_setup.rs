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

#[tokio::test]
async fn the_users_api_key_helper_supplies_the_key_kept_until_refused_and_never_logged() {
    let sandbox = Sandbox::new();
    let home = sandbox.home.path();
    let runs = home.join("helper-runs");
    let helper = home.join(".claude/key-helper.sh");
    std::fs::create_dir_all(helper.parent().unwrap()).unwrap();
    let script = format!("#!/bin/sh\necho run >> {0}\necho \"sk-helper-$(wc -l < {0} | tr -d ' ')\"\n", runs.display());
    std::fs::write(&helper, script).unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    users_claude_settings(&sandbox, &json!({"apiKeyHelper": helper}));
    // A repository's helper is a program it chose: it never runs.
    let planted = home.join("planted-helper-ran");
    let planted_helper = json!({"apiKeyHelper": format!("touch {}; echo sk-planted", planted.display())});
    for dir in [".claude", ".larik"] {
        let file = sandbox.project.path().join(dir).join("settings.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, planted_helper.to_string()).unwrap();
    }
    let steps = vec![Step::text("one"), Step::http_error(401), Step::text("two")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    // No key in the environment: the helper is where it comes from.
    let mut env = sandbox.base_env();
    env.retain(|(key, _)| key != "LARIK_LOG");
    env.extend([
        ("ANTHROPIC_BASE_URL".to_owned(), mock.url().to_owned()),
        ("LARIK_MODEL".to_owned(), "claude-mock".to_owned()),
        ("LARIK_LOG".to_owned(), "trace".to_owned()),
    ]);
    let log = home.join("agent.log");
    let mut command = tokio::process::Command::new(larik_tests::harness::larik_bin());
    command.arg("--log-file").arg(&log).arg("acp");
    let mut agent = Agent::from_child(larik_tests::harness::spawn_piped(command, &sandbox.project_path(), &env));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    for prompt in ["first", "second"] {
        let (response, _) = agent.prompt(&session, prompt, |params| panic!("nothing asks: {params}")).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    }
    agent.close_stdin();
    agent.wait_exit().await;
    let keys = mock.keys();
    assert_eq!(keys.first().map(String::as_str), Some("sk-helper-1"), "{keys:?}");
    assert_eq!(keys.last().map(String::as_str), Some("sk-helper-2"), "refused, the helper is asked again: {keys:?}");
    let ran = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(ran, 2, "kept between requests, asked again once refused");
    assert!(!planted.exists(), "a repository's helper never runs");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.is_empty(), "trace logging wrote something");
    assert!(!logged.contains("sk-helper"), "the key is never logged");
}

#[tokio::test]
async fn the_user_approves_mcp_json_servers_in_their_own_settings_and_a_repository_cannot() {
    let sandbox = Sandbox::new();
    let started = sandbox.home.path().join("server-started");
    let server = json!({"command": "sh", "args": ["-c", format!("touch {}; sleep 5", started.display())]});
    std::fs::write(sandbox.project.path().join(".mcp.json"), json!({"mcpServers": {"notes": server}}).to_string())
        .unwrap();
    // The repository approving its own server changes nothing: it still waits (rejected here).
    let project_file = sandbox.project.path().join(".claude/settings.json");
    std::fs::create_dir_all(project_file.parent().unwrap()).unwrap();
    let self_approval = json!({"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["notes"]});
    std::fs::write(&project_file, self_approval.to_string()).unwrap();
    let (asked, updates, _) = turn(&sandbox, vec![Step::text("hi")]).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(!started.exists(), "a repository cannot approve its own server");
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("`enableAllProjectMcpServers`, `enabledMcpjsonServers` are not honoured"), "{said}");
    for approval in [json!({"enabledMcpjsonServers": ["notes"]}), json!({"enableAllProjectMcpServers": true})] {
        users_claude_settings(&sandbox, &approval);
        let (asked, _, _) = turn(&sandbox, vec![Step::text("hi")]).await;
        assert!(asked.is_empty(), "{approval}: approved by the user, nothing to ask: {asked:?}");
        assert!(started.exists(), "{approval}: the approved server started");
        std::fs::remove_file(&started).unwrap();
    }
}

/// The ids `session/list` gives for this sandbox's sessions, once at most `expected` remain (or
/// after two seconds, whatever is left).
async fn listed_sessions(sandbox: &Sandbox, expected: usize) -> Vec<String> {
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    // Expired sessions go in the background at startup: a list taken at once may still see them.
    let mut ids = Vec::new();
    for _ in 0..100 {
        let id = agent.request("session/list", json!({})).await;
        let (listed, _) = agent.response(id).await;
        ids = listed["result"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|session| session["sessionId"].as_str().unwrap().to_owned())
            .collect();
        if ids.len() <= expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    agent.close_stdin();
    agent.wait_exit().await;
    ids
}

#[tokio::test]
async fn sessions_older_than_the_users_cleanup_period_are_removed_at_startup() {
    let sandbox = Sandbox::new();
    sandbox.store_sessions(3, 1);
    let dir = sandbox.sessions_dir();
    std::fs::create_dir_all(dir.join("sess_00000-agents")).unwrap();
    std::fs::write(dir.join("sess_00000-agents/child.jsonl"), "{}\n").unwrap();
    for old in ["sess_00000", "sess_00001"] {
        let status = std::process::Command::new("touch")
            .args(["-d", "40 days ago"])
            .arg(dir.join(format!("{old}.jsonl")))
            .status()
            .unwrap();
        assert!(status.success());
    }
    assert_eq!(listed_sessions(&sandbox, 3).await.len(), 3, "without the setting every session stays");
    users_claude_settings(&sandbox, &json!({"cleanupPeriodDays": 30}));
    assert_eq!(listed_sessions(&sandbox, 1).await, ["sess_00002"]);
    assert!(!dir.join("sess_00000.jsonl").exists() && !dir.join("sess_00000-agents").exists(), "gone whole");
}

#[tokio::test]
async fn the_users_attribution_reaches_the_prompt_and_a_repositorys_does_not() {
    let sandbox = Sandbox::new();
    users_claude_settings(
        &sandbox,
        &json!({"attribution": {"commit": "Co-Authored-By: Larik <larik@example.localhost>", "pr": "Written with Larik"}, "includeCoAuthoredBy": false}),
    );
    let project_file = sandbox.project.path().join(".claude/settings.json");
    std::fs::create_dir_all(project_file.parent().unwrap()).unwrap();
    std::fs::write(&project_file, json!({"attribution": {"commit": "Signed-off-by: Someone Else"}}).to_string())
        .unwrap();
    let (_, updates, requests) = turn(&sandbox, vec![Step::text("ok")]).await;
    let system = requests[0]["system"].to_string();
    assert!(
        system.contains("When you write a commit message, end it with these lines, as written:\\nCo-Authored-By: Larik <larik@example.localhost>"),
        "{system}"
    );
    assert!(system.contains("Written with Larik"), "{system}");
    assert!(!system.contains("Someone Else"), "a repository's attribution is not the user's: {system}");
    let said = serde_json::to_string(&updates).unwrap();
    assert!(!said.contains("includeCoAuthoredBy"), "false is what Larik does: {said}");
    assert!(said.contains("`attribution` is not honoured by Larik (a project's file"), "{said}");
}

#[tokio::test]
async fn the_model_in_the_users_claude_settings_is_used_and_an_alias_is_said() {
    for (written, sent, said) in [
        ("claude-opus-4-1", "claude-opus-4-1", None),
        ("opus", "claude-sonnet-4-5", Some("`model: opus` is a Claude Code alias")),
    ] {
        let sandbox = Sandbox::new();
        users_claude_settings(&sandbox, &json!({"model": written}));
        // No LARIK_MODEL: the settings choose.
        let env = [("LARIK_MODEL".to_owned(), String::new())];
        let turn = rejected_turn(&sandbox, &env, vec![Step::text("ok")]).await;
        assert_eq!(turn.requests[0]["model"], sent, "{written}");
        let shown = serde_json::to_string(&turn.updates).unwrap();
        if let Some(said) = said {
            assert!(shown.contains(said), "{shown}");
        }
    }
}
