#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The organisation's managed policy, in Claude Code's shape, over ACP with the real binary. A
//! scratch directory stands for `/etc` (`LARIK_MANAGED_ROOT`); the user's own files sit under a
//! private HOME. The policy's rules always apply, nothing loosens what it restricts, and a
//! restriction Larik cannot enforce makes every call ask.

use std::path::Path;

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use larik_tests::turns::rejected_turn;
use serde_json::{Value, json};

fn write(path: &Path, body: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(body).unwrap()).unwrap();
}

/// A sandbox with a scratch `/etc` holding `managed` as Claude Code's managed settings.
fn with_policy(managed: &Value) -> (Sandbox, tempfile::TempDir) {
    let etc = tempfile::tempdir().unwrap();
    write(&etc.path().join("claude-code/managed-settings.json"), managed);
    (Sandbox::new(), etc)
}

fn env(sandbox: &Sandbox, etc: &Path, mock: &MockLlm) -> Vec<(String, String)> {
    let mut env = sandbox.env(mock.url());
    env.push(("LARIK_MANAGED_ROOT".into(), etc.display().to_string()));
    env
}

/// One prompt whose turn is `steps` under the policy in `etc`, every request rejected.
async fn turn(sandbox: &Sandbox, etc: &Path, steps: Vec<Step>) -> (Vec<Value>, Vec<Value>) {
    let policy = [("LARIK_MANAGED_ROOT".to_owned(), etc.display().to_string())];
    let turn = rejected_turn(sandbox, &policy, steps).await;
    (turn.asked, turn.updates)
}

#[tokio::test]
async fn only_the_policys_allow_rules_count_and_its_deny_rules_hold() {
    let (sandbox, etc) = with_policy(&json!({
        "allowManagedPermissionRulesOnly": true,
        "permissions": {"allow": ["Bash(mkdir:*)"], "deny": ["Write"]}
    }));
    // The user allows `touch` in both their files; under the policy it asks all the same.
    write(&sandbox.home.path().join(".claude/settings.json"), &json!({"permissions": {"allow": ["Bash(touch:*)"]}}));
    sandbox.write_user_settings(&json!({"permissions": {"allow": ["Bash(touch:*)"]}, "sandbox": {"enabled": false}}));
    let (asked, _) = turn(
        &sandbox,
        etc.path(),
        vec![
            Step::tool("t1", "bash", json!({"command": "touch made.txt"})),
            Step::tool("t2", "bash", json!({"command": "mkdir made-by-policy"})),
            Step::tool("t3", "write", json!({"path": "written.txt", "content": "x"})),
            Step::text("done"),
        ],
    )
    .await;
    let titles: Vec<String> = asked.iter().map(|params| params["toolCall"]["title"].to_string()).collect();
    assert_eq!(asked.len(), 1, "only touch asked: {titles:?}");
    assert!(!sandbox.project.path().join("made.txt").exists());
    assert!(sandbox.project.path().join("made-by-policy").is_dir(), "the policy's own rule allowed mkdir");
    assert!(!sandbox.project.path().join("written.txt").exists(), "the policy's deny rule held");
}

#[tokio::test]
async fn always_allow_saves_nothing_under_a_policy_that_allows_only_its_own_rules() {
    let (sandbox, etc) = with_policy(&json!({"allowManagedPermissionRulesOnly": true}));
    let mock = MockLlm::start(Scenario {
        responses: vec![
            Step::tool("t1", "write", json!({"path": "a.txt", "content": "a"})),
            Step::tool("t2", "write", json!({"path": "b.txt", "content": "b"})),
            Step::text("done"),
        ],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &env(&sandbox, etc.path(), &mock));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let mut asked = 0;
    agent
        .prompt(&session, "go", |_| {
            asked += 1;
            "allow_always"
        })
        .await;
    assert_eq!(asked, 2, "the first answer allowed that call only");
    assert!(sandbox.project.path().join("b.txt").exists());
    let saved = walk(&sandbox.home.path().join(".config"));
    assert!(saved.iter().all(|path| !path.ends_with("settings.json")), "nothing saved: {saved:?}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .flat_map(|entry| if entry.path().is_dir() { walk(&entry.path()) } else { vec![entry.path()] })
        .collect()
}

#[tokio::test]
async fn yolo_is_not_offered_nor_reachable_when_the_policy_disables_it() {
    let (sandbox, etc) = with_policy(&json!({"permissions": {"disableBypassPermissionsMode": "disable"}}));
    sandbox.write_user_settings(&json!({"permissions": {"defaultMode": "bypassPermissions"}}));
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("hi")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &env(&sandbox, etc.path(), &mock));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (opened, _) = agent.response(id).await;
    let modes = &opened["result"]["modes"];
    assert_eq!(modes["currentModeId"], "default", "{opened}");
    let offered: Vec<&str> =
        modes["availableModes"].as_array().unwrap().iter().map(|mode| mode["id"].as_str().unwrap()).collect();
    assert!(!offered.contains(&"yolo") && offered.contains(&"plan"), "{offered:?}");
    let session = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let id = agent.request("session/set_mode", json!({"sessionId": session, "modeId": "yolo"})).await;
    let (refused, _) = agent.response(id).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("disableBypassPermissionsMode"), "{refused}");
    let (_, updates) = agent.prompt(&session, "/mode yolo", |_| "reject_once").await;
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("Not switched"), "{said}");
}

#[tokio::test]
async fn a_restriction_larik_cannot_enforce_makes_every_call_ask() {
    let (sandbox, etc) = with_policy(&json!({"availableModels": ["sonnet"], "companyAnnouncements": ["Welcome"]}));
    sandbox.write_user_settings(&json!({"permissions": {"defaultMode": "bypassPermissions"}}));
    std::fs::write(sandbox.project.path().join("notes.txt"), "secret plans").unwrap();
    let (asked, updates) =
        turn(&sandbox, etc.path(), vec![Step::tool("t1", "read", json!({"path": "notes.txt"})), Step::text("done")])
            .await;
    assert_eq!(asked.len(), 1, "even a read asks, in yolo: {asked:?}");
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("`availableModels`, which Larik cannot enforce"), "said loudly: {said}");
    assert!(!said.contains("`companyAnnouncements`"), "an announcement restricts nothing: {said}");
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let output = tokio::process::Command::new(larik_tests::harness::larik_bin())
        .args(["doctor", "--json"])
        .current_dir(sandbox.project_path())
        .env_clear()
        .envs(env(&sandbox, etc.path(), &mock))
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let settings = report["checks"].as_array().unwrap().iter().find(|check| check["id"] == "settings").unwrap();
    assert_eq!(settings["status"], "warning", "{settings}");
    assert!(settings["detail"].as_str().unwrap().contains("`availableModels`"), "doctor says it too: {settings}");
}

#[tokio::test]
async fn only_the_policys_hooks_run_when_it_says_so() {
    let (sandbox, etc) = with_policy(&json!({"allowManagedHooksOnly": true}));
    let marker = |name: &str| sandbox.home.path().join(name);
    let hook = |name: &str| json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("touch {}", marker(name).display())}]}]}});
    let mut policy = hook("managed-ran");
    policy["allowManagedHooksOnly"] = json!(true);
    write(&etc.path().join("claude-code/managed-settings.json"), &policy);
    write(&sandbox.home.path().join(".claude/settings.json"), &hook("user-ran"));
    turn(&sandbox, etc.path(), vec![Step::text("hi")]).await;
    assert!(marker("managed-ran").exists(), "the organisation's hook ran");
    assert!(!marker("user-ran").exists(), "the user's hook did not");
    // Without the key the user's hook runs too; `disableAllHooks` of the user's turns theirs off
    // but not the organisation's.
    write(&etc.path().join("claude-code/managed-settings.json"), &hook("managed-again"));
    let mut user = hook("user-again");
    user["disableAllHooks"] = json!(true);
    write(&sandbox.home.path().join(".claude/settings.json"), &user);
    turn(&sandbox, etc.path(), vec![Step::text("hi")]).await;
    assert!(marker("managed-again").exists() && !marker("user-again").exists());
}

#[tokio::test]
async fn a_denied_mcp_server_never_starts_whoever_configured_it() {
    let (sandbox, etc) = with_policy(&json!({
        "deniedMcpServers": [{"serverName": "notes"}, {"serverUrl": "http://*.attacker.localhost/*"}]
    }));
    let started = sandbox.home.path().join("server-started");
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("hi")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &env(&sandbox, etc.path(), &mock));
    agent.initialize().await;
    let servers = json!([
        {"name": "notes", "command": "sh", "args": ["-c", format!("touch {}; sleep 5", started.display())], "env": []},
        {"type": "http", "name": "docs", "url": "http://mcp.attacker.localhost/x", "headers": []}
    ]);
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": servers})).await;
    let (opened, _) = agent.response(id).await;
    let session = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let (_, updates) = agent.prompt(&session, "hi", |_| "reject_once").await;
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("the MCP server `notes` is denied"), "{said}");
    assert!(said.contains("the MCP server `docs` is denied"), "{said}");
    assert!(!started.exists(), "the denied server's command never ran");
}

#[tokio::test]
async fn a_managed_file_that_cannot_be_read_stops_the_session_from_opening() {
    let etc = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new();
    let dir = etc.path().join("claude-code/managed-settings.d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("10-security.json"), "{\"permissions\": {\"deny\": [\"Bash\"]").unwrap();
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &env(&sandbox, etc.path(), &mock));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (refused, _) = agent.response(id).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("10-security.json"), "{refused}");
}
