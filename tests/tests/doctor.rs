#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `larik doctor`, `larik config` and `--version`, run as a user runs them in a terminal.

use larik_tests::harness::{Sandbox, larik_bin};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::Value;

async fn larik(sandbox: &Sandbox, env: Vec<(String, String)>, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(larik_bin())
        .args(args)
        .current_dir(sandbox.project_path())
        .env_clear()
        .envs(env)
        .output()
        .await
        .expect("run larik")
}

fn checks(output: &std::process::Output) -> (bool, Vec<Value>) {
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)));
    (report["ok"].as_bool().unwrap(), report["checks"].as_array().unwrap().clone())
}

fn check<'a>(checks: &'a [Value], id: &str) -> &'a Value {
    checks.iter().find(|check| check["id"] == id).unwrap_or_else(|| panic!("no {id} check in {checks:?}"))
}

#[tokio::test]
async fn version_names_the_commit() {
    let sandbox = Sandbox::new();
    let output = larik(&sandbox, sandbox.env("http://127.0.0.1:9"), &["--version"]).await;
    let printed = String::from_utf8(output.stdout).unwrap();
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let commit = String::from_utf8(commit.stdout).unwrap();
    assert_eq!(printed.trim(), format!("larik {} ({})", env!("CARGO_PKG_VERSION"), commit.trim()));
}

#[tokio::test]
async fn doctor_says_what_works_and_fails_on_what_blocks() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::http_error(401)] }).await.unwrap();
    let env = sandbox.env(mock.url());
    // A key the endpoint rejects is an error, and the key itself is never printed.
    let rejected = larik(&sandbox, env.clone(), &["doctor", "--json"]).await;
    assert_eq!(rejected.status.code(), Some(1));
    let (ok, found) = checks(&rejected);
    assert!(!ok);
    assert_eq!(check(&found, "provider")["status"], "error", "{found:?}");
    assert!(check(&found, "provider")["detail"].as_str().unwrap().contains("authentication"), "{found:?}");
    assert!(!String::from_utf8_lossy(&rejected.stdout).contains("test-key"));

    // Now the endpoint lists its models for the key.
    let accepted = larik(&sandbox, env.clone(), &["doctor", "--json"]).await;
    let (ok, found) = checks(&accepted);
    assert!(ok, "{found:?}");
    assert_eq!(accepted.status.code(), Some(0));
    let ids: Vec<&str> = found.iter().map(|check| check["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["version", "install", "settings", "model", "provider", "sandbox", "language_servers", "mcp", "chromium"]
    );
    assert_eq!(
        check(&found, "model")["detail"],
        format!("claude-mock (Anthropic) at {}, key from $ANTHROPIC_API_KEY", mock.url())
    );
    assert_eq!(check(&found, "provider")["status"], "ok");
    assert!(!String::from_utf8_lossy(&accepted.stdout).contains("test-key"));

    // No model at all: the error says how to configure one; the text form says so in words.
    let mut bare: Vec<(String, String)> =
        env.into_iter().filter(|(name, _)| !name.starts_with("ANTHROPIC") && name != "LARIK_MODEL").collect();
    bare.push(("LARIK_LOG".into(), "off".into()));
    let output = larik(&sandbox, bare, &["doctor"]).await;
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.lines().any(|line| line.starts_with("ERROR") && line.contains("no model is configured")), "{text}");
    assert!(text.ends_with("Larik cannot work here until each ERROR above is fixed.\n"), "{text}");
}

#[tokio::test]
async fn doctor_reports_a_broken_settings_file_and_a_failed_mcp_server() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario::default()).await.unwrap();
    let config = sandbox.home.path().join(".config/larik");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), r#"{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}}"#)
        .unwrap();
    let output = larik(&sandbox, sandbox.env(mock.url()), &["doctor", "--json"]).await;
    let (ok, found) = checks(&output);
    assert!(ok, "a failed MCP server is a warning: the agent works without it");
    let mcp = check(&found, "mcp");
    assert_eq!(mcp["status"], "warning", "{mcp}");
    assert!(
        mcp["detail"].as_str().unwrap().contains("gone") && mcp["detail"].as_str().unwrap().contains("failed"),
        "{mcp}"
    );
    std::fs::write(config.join("settings.json"), r#"{"model": "x",,}"#).unwrap();
    let output = larik(&sandbox, sandbox.env(mock.url()), &["doctor", "--json"]).await;
    let (ok, found) = checks(&output);
    assert!(!ok);
    assert_eq!(check(&found, "settings")["status"], "error");
    assert!(check(&found, "settings")["detail"].as_str().unwrap().contains("settings.json"));
}

#[tokio::test]
async fn config_set_writes_what_the_agent_reads_and_refuses_what_it_does_not_know() {
    let sandbox = Sandbox::new();
    let env = sandbox.env("http://127.0.0.1:9");
    let file = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{\"permissions\": {\"allow\": [\"Bash(npm test)\"]}}\n").unwrap();
    let set = larik(&sandbox, env.clone(), &["config", "set", "mode", "plan"]).await;
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert!(larik(&sandbox, env.clone(), &["config", "set", "tokenSaver", "true"]).await.status.success());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["permissions"]["allow"][0], "Bash(npm test)", "other settings are kept");
    assert_eq!(written["permissions"]["defaultMode"], "plan");
    assert_eq!(written["tokenSaver"], true);
    let get = larik(&sandbox, env.clone(), &["config", "get", "mode"]).await;
    assert_eq!(String::from_utf8(get.stdout).unwrap(), "\"plan\"\n");
    let listing = String::from_utf8(larik(&sandbox, env.clone(), &["config", "get"]).await.stdout).unwrap();
    assert!(listing.lines().any(|line| line.starts_with("tokenSaver") && line.contains("true")), "{listing}");
    assert!(listing.lines().any(|line| line.starts_with("model") && line.contains("(not set)")), "{listing}");
    let refused = larik(&sandbox, env.clone(), &["config", "set", "sandbox.network", "sometimes"]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("true or false"));
    let unknown = larik(&sandbox, env, &["config", "set", "apiKey", "sk-1"]).await;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(!std::fs::read_to_string(&file).unwrap().contains("sk-1"));
}
