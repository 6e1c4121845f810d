#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Claude Code's plugins over ACP with the real binary, laid out under a private HOME exactly as
//! Claude Code installs them (`~/.claude/plugins/installed_plugins.json` version 2, the plugin in
//! `~/.claude/plugins/cache/<marketplace>/<plugin>/<version>/`, `enabledPlugins` in
//! `~/.claude/settings.json`): its commands, skills, agents, hooks and MCP servers load when it
//! is enabled and not otherwise; one a repository enables runs nothing before the user approved
//! the project.

use std::path::{Path, PathBuf};

use larik_tests::harness::{Agent, Sandbox, write_file as write};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

const ID: &str = "formatter@acme-tools";

fn everything() -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.exists(), "{} is missing: run scripts/setup.sh", script.display());
    script.display().to_string()
}

/// Installs the `formatter` plugin of the `acme-tools` marketplace as Claude Code does, and
/// returns its root. Its hook writes what it was given into `hook-ran.txt` in the project.
fn install_formatter(sandbox: &Sandbox) -> PathBuf {
    let plugins = sandbox.home.path().join(".claude/plugins");
    let root = plugins.join("cache/acme-tools/formatter/1.2.0");
    write(
        &root.join(".claude-plugin/plugin.json"),
        r#"{"name": "formatter", "version": "1.2.0", "description": "Formatting helpers", "author": {"name": "Acme"}}"#,
    );
    write(
        &root.join("commands/fmt-check.md"),
        "---\ndescription: Check the formatting of a file\nargument-hint: [file]\n---\nRun ${CLAUDE_PLUGIN_ROOT}/bin/check on $ARGUMENTS.",
    );
    write(
        &root.join("agents/style-critic.md"),
        "---\nname: style-critic\ndescription: Reviews code style only\ntools: Read, Grep\n---\nYou review style.",
    );
    write(
        &root.join("skills/style-guide/SKILL.md"),
        "---\nname: style-guide\ndescription: The house style for Rust code\n---\nUse four spaces.",
    );
    write(
        &root.join("hooks/hooks.json"),
        r#"{"description": "Formatting reminders", "hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "bash \"${CLAUDE_PLUGIN_ROOT}/hooks/remind.sh\"", "timeout": 10}
        ]}]}}"#,
    );
    write(
        &root.join("hooks/remind.sh"),
        "printf '%s\\n%s\\n' \"$CLAUDE_PLUGIN_ROOT\" \"$CLAUDE_PLUGIN_DATA\" > \"$CLAUDE_PROJECT_DIR/hook-ran.txt\"\necho 'FORMATTER REMINDER: run the formatter before committing.'\n",
    );
    let node = std::process::Command::new("bash").args(["-c", "command -v node"]).output().unwrap();
    let node = String::from_utf8(node.stdout).unwrap().trim().to_owned();
    write(
        &root.join(".mcp.json"),
        &json!({"mcpServers": {"everything": {"command": node, "args": [everything(), "stdio"], "env": {"FROM_PLUGIN": "${CLAUDE_PLUGIN_ROOT}"}}}})
            .to_string(),
    );
    write(
        &plugins.join("installed_plugins.json"),
        &json!({"version": 2, "plugins": {ID: [{
            "scope": "user",
            "installPath": root,
            "version": "1.2.0",
            "installedAt": "2026-11-02T09:14:00.000Z",
            "lastUpdated": "2026-11-02T09:14:00.000Z",
            "gitCommitSha": "4b1e0c2d9a8f7e6d5c4b3a291807f6e5d4c3b2a1"
        }]}})
        .to_string(),
    );
    write(
        &plugins.join("known_marketplaces.json"),
        &json!({"acme-tools": {"source": {"source": "git", "url": "https://git.acme.localhost/tools.git"}, "installLocation": plugins.join("marketplaces/acme-tools"), "lastUpdated": "2026-11-02T09:14:00.000Z"}}).to_string(),
    );
    root
}

fn claude_settings(dir: &Path, settings: &Value) {
    write(&dir.join(".claude/settings.json"), &settings.to_string());
}

/// One session of prompts, each answered by the permission callback with `answer`; the model's
/// requests and what the editor was shown.
async fn session(
    sandbox: &Sandbox,
    steps: Vec<Step>,
    prompts: &[&str],
    answer: &'static str,
) -> (Vec<Value>, Vec<Value>) {
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let mut shown = Vec::new();
    for prompt in prompts {
        let (response, updates) = agent.prompt(&session, prompt, |_| answer).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        shown.extend(updates);
    }
    agent.close_stdin();
    agent.wait_exit().await;
    (mock.requests(), shown)
}

fn tool_description(request: &Value, name: &str) -> String {
    let tools = request["tools"].as_array().unwrap();
    tools.iter().find(|tool| tool["name"] == name).map(|tool| tool["description"].to_string()).unwrap_or_default()
}

fn last_user_text(request: &Value) -> String {
    request["messages"].as_array().unwrap().last().unwrap()["content"].to_string()
}

#[tokio::test]
async fn an_enabled_plugin_brings_its_commands_skills_agents_hooks_and_servers() {
    let sandbox = Sandbox::new();
    let root = install_formatter(&sandbox);
    claude_settings(sandbox.home.path(), &json!({"enabledPlugins": {ID: true}}));
    let steps = vec![
        Step::tool("t1", "mcp__plugin_formatter_everything__echo", json!({"message": "from the plugin's server"})),
        Step::text("first done"),
        Step::text("second done"),
        Step::text("third done"),
    ];
    let (requests, _) = session(
        &sandbox,
        steps,
        &["check the style", "/fmt-check src/lib.rs", "/formatter:fmt-check a.rs"],
        "reject_once",
    )
    .await;

    // The hook ran with the plugin's variables, and what it printed reached the model.
    let ran = std::fs::read_to_string(sandbox.project.path().join("hook-ran.txt")).expect("the plugin's hook ran");
    let data = sandbox.home.path().join(".claude/plugins/data/formatter-acme-tools");
    assert_eq!(ran, format!("{}\n{}\n", root.display(), data.display()));
    assert!(requests[0]["messages"].to_string().contains("FORMATTER REMINDER"), "{}", requests[0]["messages"]);

    // Its skill is in the index, its agent among the task tool's, scoped by the plugin's name.
    let system = requests[0]["system"].to_string();
    assert!(system.contains("formatter:style-guide"), "{system}");
    assert!(tool_description(&requests[0], "task").contains("formatter:style-critic"), "{}", requests[0]["tools"]);

    // Its server's tools are named as Claude Code names them, and run.
    let echoed = requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(echoed.contains("Echo: from the plugin's server"), "{echoed}");

    // Its command, by its short name where no other has it and by its scoped name, with
    // `${CLAUDE_PLUGIN_ROOT}` put in.
    for (request, file) in [(&requests[2], "src/lib.rs"), (&requests[3], "a.rs")] {
        let sent = last_user_text(request);
        assert!(sent.contains(&format!("Run {}/bin/check on {file}.", root.display())), "{sent}");
    }
}

#[tokio::test]
async fn an_installed_plugin_not_enabled_loads_nothing() {
    let sandbox = Sandbox::new();
    install_formatter(&sandbox);
    claude_settings(sandbox.home.path(), &json!({"enabledPlugins": {ID: false}}));
    let (requests, _) =
        session(&sandbox, vec![Step::text("a"), Step::text("b")], &["hello", "/fmt-check x.rs"], "reject_once").await;
    assert!(!sandbox.project.path().join("hook-ran.txt").exists(), "its hook did not run");
    let everything = requests.iter().map(|request| request.to_string()).collect::<String>();
    for absent in
        ["FORMATTER REMINDER", "formatter:style-guide", "formatter:style-critic", "mcp__plugin_formatter", "bin/check"]
    {
        assert!(!everything.contains(absent), "{absent} reached the model");
    }
}

#[tokio::test]
async fn a_plugin_a_repository_enables_runs_nothing_before_the_project_is_approved() {
    let sandbox = Sandbox::new();
    install_formatter(&sandbox);
    // The repository turns on a plugin the user has installed but not enabled.
    claude_settings(sandbox.project.path(), &json!({"enabledPlugins": {ID: true}}));
    let steps = vec![
        Step::tool("t1", "mcp__plugin_formatter_everything__echo", json!({"message": "unapproved"})),
        Step::text("done"),
    ];
    let (requests, _) = session(&sandbox, steps, &["hello"], "reject_once").await;
    assert!(!sandbox.project.path().join("hook-ran.txt").exists(), "its hook waited for approval");
    assert!(!requests[0]["messages"].to_string().contains("FORMATTER REMINDER"));
    let result = requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(!result.contains("Echo: unapproved"), "its server did not connect: {result}");

    // Approved, the same plugin runs.
    let steps = vec![Step::text("done")];
    let (requests, _) = session(&sandbox, steps, &["hello"], "allow_always").await;
    assert!(sandbox.project.path().join("hook-ran.txt").exists(), "approved, its hook runs");
    assert!(requests[0]["messages"].to_string().contains("FORMATTER REMINDER"));
}

/// `larik plugin ARGS` in the project, with the sandbox's environment: exit code and stdout.
fn larik_plugin(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let output = sandbox.run_larik(&[&["plugin"], args].concat());
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

/// A marketplace laid out as Claude Code's official one is (`.claude-plugin/marketplace.json`
/// at the root, each plugin in `plugins/<name>/`), holding a plugin shaped like its hook-based
/// ones: a manifest, `hooks/hooks.json` with a description and a Python script run through
/// `${CLAUDE_PLUGIN_ROOT}`, commands, an agent and a skill. The content is this test's own.
fn guard_marketplace(dir: &Path) {
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        &json!({
            "$schema": "https://anthropic.localhost/claude-code/marketplace.schema.json",
            "name": "guard-market",
            "description": "Guard rails for shared repositories",
            "owner": {"name": "Platform team", "email": "platform@example.localhost"},
            "plugins": [
                {"name": "prod-guard", "description": "Refuses commands that touch production", "version": "1.0.0",
                 "author": {"name": "Platform team"}, "source": "./plugins/prod-guard", "category": "security"},
                {"name": "changelog", "description": "Changelog helpers", "source": "./plugins/changelog"}
            ]
        })
        .to_string(),
    );
    let plugin = dir.join("plugins/prod-guard");
    write(
        &plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "prod-guard", "description": "Refuses commands that touch production", "author": {"name": "Platform team"}, "version": "1.0.0"}"#,
    );
    write(
        &plugin.join("hooks/hooks.json"),
        r#"{
  "description": "Prod guard: refuses commands naming production",
  "hooks": {
    "PreToolUse": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py\"",
            "timeout": 10
          }
        ]
      }
    ]
  }
}"#,
    );
    write(
        &plugin.join("hooks/pretooluse.py"),
        r#"import json, sys
event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if event.get("tool_name") == "Bash" and "prod" in command:
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "prod-guard: production is off limits"}}))
sys.exit(0)
"#,
    );
    write(&plugin.join("commands/guard-help.md"), "---\ndescription: What prod-guard refuses\n---\nExplain the guard.");
    write(
        &plugin.join("agents/guard-auditor.md"),
        "---\nname: guard-auditor\ndescription: Audits guard rules\n---\nAudit.",
    );
    write(
        &plugin.join("skills/writing-guards/SKILL.md"),
        "---\nname: writing-guards\ndescription: How to write guard rules\n---\nRules.",
    );
    write(&dir.join("plugins/changelog/commands/changelog.md"), "Write the changelog.");
}

#[tokio::test]
async fn larik_plugin_installs_from_a_marketplace_and_nothing_runs_until_enabled() {
    let sandbox = Sandbox::new();
    let market = sandbox.home.path().join("src/guard-market");
    guard_marketplace(&market);
    let market_path = market.display().to_string();

    let (code, _, said) = larik_plugin(&sandbox, &["install", &market_path]);
    assert_eq!(code, 1);
    assert!(said.contains("several plugins (prod-guard, changelog)"), "{said}");
    let (code, said, _) = larik_plugin(&sandbox, &["install", &market_path, "prod-guard"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("Installed prod-guard@guard-market 1.0.0"), "{said}");
    let (_, listed, _) = larik_plugin(&sandbox, &["list"]);
    assert!(listed.contains("prod-guard@guard-market  1.0.0  disabled"), "{listed}");

    // Installed, not enabled: the command its hook would refuse runs.
    let touch = || vec![Step::tool("t1", "bash", json!({"command": "touch prod-deployed.txt"})), Step::text("done")];
    session(&sandbox, touch(), &["deploy"], "allow_once").await;
    let deployed = sandbox.project.path().join("prod-deployed.txt");
    assert!(deployed.exists(), "the disabled plugin's hook did not run");
    std::fs::remove_file(&deployed).unwrap();

    let (code, said, _) = larik_plugin(&sandbox, &["enable", "prod-guard@guard-market"]);
    assert_eq!(code, 0, "{said}");
    let (requests, updates) = session(&sandbox, touch(), &["deploy", "/plugin"], "allow_once").await;
    assert!(!deployed.exists(), "the enabled plugin's hook refused the command");
    let result = requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(result.contains("prod-guard: production is off limits"), "{result}");
    let shown = serde_json::to_string(&updates).unwrap();
    assert!(shown.contains("prod-guard@guard-market  1.0.0  enabled"), "/plugin lists it: {shown}");
    assert!(requests[0]["system"].to_string().contains("prod-guard:writing-guards"));

    let (code, _, said) = larik_plugin(&sandbox, &["enable", "changelog@guard-market"]);
    assert_eq!(code, 1, "only an installed plugin is enabled");
    assert!(said.contains("not installed"), "{said}");
    // Installed by name from the marketplace added with the first install.
    let (code, said, _) = larik_plugin(&sandbox, &["install", "changelog@guard-market"]);
    assert_eq!(code, 0, "{said}");
    let (code, _, _) = larik_plugin(&sandbox, &["disable", "prod-guard@guard-market"]);
    assert_eq!(code, 0);
    let (_, listed, _) = larik_plugin(&sandbox, &["list"]);
    assert!(listed.contains("prod-guard@guard-market  1.0.0  disabled"), "{listed}");
    assert!(listed.contains("changelog@guard-market  unknown  disabled"), "{listed}");
}
