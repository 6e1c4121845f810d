//! Loading hook definitions from realistic settings files in temporary homes and projects.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

/// A temporary home, XDG config directory and project, with the environment map naming them.
struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    xdg: PathBuf,
    project: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("tempdir: {error}"));
        let (home, xdg, project) = (dir.path().join("home"), dir.path().join("xdg"), dir.path().join("project"));
        for path in [&home, &xdg, &project] {
            std::fs::create_dir_all(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        }
        Setup { _dir: dir, home, xdg, project }
    }

    fn env(&self) -> HashMap<String, String> {
        HashMap::from([
            ("HOME".to_owned(), self.home.display().to_string()),
            ("XDG_CONFIG_HOME".to_owned(), self.xdg.display().to_string()),
        ])
    }

    fn larik_user(&self) -> PathBuf {
        self.xdg.join("larik/settings.json")
    }

    fn claude_user(&self) -> PathBuf {
        self.home.join(".claude/settings.json")
    }

    fn in_project(&self, relative: &str) -> PathBuf {
        self.project.join(relative)
    }

    fn write(&self, path: &Path, json: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|error| panic!("{}: {error}", parent.display()));
        }
        std::fs::write(path, json).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    }

    fn try_load(&self) -> Result<Hooks, HookConfigError> {
        Hooks::load(&SettingsFiles::default(), &self.project, &self.env())
    }

    fn load(&self) -> Hooks {
        self.try_load().unwrap_or_else(|error| panic!("load: {error}"))
    }
}

/// A settings file with one command hook on PreToolUse.
fn pre_tool_use(matcher: &str, command: &str) -> String {
    serde_json::json!({"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}}).to_string()
}

fn commands(handlers: &[HookHandler]) -> Vec<&str> {
    handlers.iter().map(HookHandler::label).collect()
}

#[test]
fn every_settings_file_is_read_in_order_with_its_scope() {
    let setup = Setup::new();
    setup.write(&setup.larik_user(), &pre_tool_use("Bash", "larik-user.sh"));
    setup.write(&setup.claude_user(), &pre_tool_use("Bash", "claude-user.sh"));
    for name in
        [".larik/settings.json", ".larik/settings.local.json", ".claude/settings.json", ".claude/settings.local.json"]
    {
        setup.write(&setup.in_project(name), &pre_tool_use("Bash", name));
    }
    let hooks = setup.load();
    let handlers = hooks.matching(HookEvent::PreToolUse, &["bash", "Bash"]);
    assert_eq!(
        commands(&handlers),
        [
            "larik-user.sh",
            "claude-user.sh",
            ".larik/settings.json",
            ".larik/settings.local.json",
            ".claude/settings.json",
            ".claude/settings.local.json"
        ]
    );
    let scopes: Vec<Scope> = handlers.iter().map(|handler| handler.scope).collect();
    assert_eq!(scopes, [Scope::User, Scope::User, Scope::Project, Scope::Project, Scope::Project, Scope::Project]);
    assert_eq!(handlers[1].source, setup.claude_user());
    assert_eq!(handlers[4].source, setup.in_project(".claude/settings.json"));
    assert!(hooks.problems().is_empty(), "{:?}", hooks.problems());
}

#[test]
fn a_claude_code_project_configuration_reads_as_written() {
    let setup = Setup::new();
    setup.write(
        &setup.in_project(".claude/settings.json"),
        r#"{
          "permissions": {"allow": ["Bash(npm test)"]},
          "hooks": {
            "PreToolUse": [
              {"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/protect.py", "timeout": 10}]},
              {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Is this command safe? $ARGUMENTS", "model": "claude-haiku-4-5"}]}
            ],
            "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "npx prettier --write \"$(jq -r .tool_input.file_path)\"", "statusMessage": "formatting"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}],
            "SessionStart": [{"matcher": "startup|resume", "hooks": [{"type": "command", "command": "git status --short"}]}],
            "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "cargo test -q", "timeout": 0.5}]}]
          }
        }"#,
    );
    let hooks = setup.load();
    assert!(hooks.problems().is_empty(), "{:?}", hooks.problems());
    let edit = hooks.matching(HookEvent::PreToolUse, &["multi_edit", "MultiEdit"]);
    assert_eq!(edit.len(), 1);
    assert_eq!(edit[0].matcher.as_deref(), Some("Edit|MultiEdit|Write"));
    assert_eq!(edit[0].timeout, Duration::from_secs(10));
    let bash = hooks.matching(HookEvent::PreToolUse, &["bash", "Bash"]);
    assert_eq!(bash.len(), 1);
    assert_eq!(
        bash[0].kind,
        HandlerKind::Prompt {
            prompt: "Is this command safe? $ARGUMENTS".into(),
            model: Some("claude-haiku-4-5".into())
        }
    );
    assert_eq!(bash[0].timeout, DEFAULT_PROMPT_TIMEOUT);
    let post = hooks.matching(HookEvent::PostToolUse, &["write", "Write"]);
    assert_eq!(post[0].timeout, DEFAULT_COMMAND_TIMEOUT);
    assert!(hooks.matching(HookEvent::PostToolUse, &["read", "Read"]).is_empty());
    assert_eq!(commands(&hooks.matching(HookEvent::UserPromptSubmit, &[])), ["date"]);
    assert_eq!(commands(&hooks.matching(HookEvent::SessionStart, &["resume"])), ["git status --short"]);
    assert!(hooks.matching(HookEvent::SessionStart, &["clear"]).is_empty());
    assert_eq!(hooks.matching(HookEvent::Stop, &[])[0].timeout, Duration::from_millis(500));
    assert!(hooks.matching(HookEvent::Notification, &["idle_prompt"]).is_empty());
}

#[test]
fn events_without_matchers_run_every_handler() {
    let setup = Setup::new();
    setup.write(
        &setup.claude_user(),
        r#"{"hooks": {"Stop": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "stop.sh"}]}],
        "UserPromptSubmit": [{"matcher": "nothing", "hooks": [{"type": "command", "command": "prompt.sh"}]}],
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "compact.sh"}]}]}}"#,
    );
    let hooks = setup.load();
    assert_eq!(commands(&hooks.matching(HookEvent::Stop, &[])), ["stop.sh"]);
    assert_eq!(commands(&hooks.matching(HookEvent::UserPromptSubmit, &[])), ["prompt.sh"]);
    assert!(hooks.matching(HookEvent::PreCompact, &["auto"]).is_empty());
    assert_eq!(commands(&hooks.matching(HookEvent::PreCompact, &["manual"])), ["compact.sh"]);
}

#[test]
fn identical_handlers_from_different_files_appear_once() {
    let setup = Setup::new();
    setup.write(&setup.claude_user(), &pre_tool_use("Bash", "guard.sh"));
    setup.write(&setup.in_project(".claude/settings.json"), &pre_tool_use("Bash|Edit", "guard.sh"));
    setup.write(&setup.in_project(".larik/settings.json"), r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}]}}"#);
    let hooks = setup.load();
    let handlers = hooks.matching(HookEvent::PreToolUse, &["bash", "Bash"]);
    // The one with another timeout is another handler; the project copy of the user's is not.
    assert_eq!(handlers.len(), 2);
    assert_eq!((handlers[0].scope, handlers[0].timeout), (Scope::User, DEFAULT_COMMAND_TIMEOUT));
    assert_eq!(handlers[1].timeout, Duration::from_secs(5));
    assert_eq!(commands(&hooks.matching(HookEvent::PreToolUse, &["edit", "Edit"])), ["guard.sh", "guard.sh"]);
    assert_eq!(hooks.matching(HookEvent::PreToolUse, &["edit", "Edit"])[0].scope, Scope::Project);
}

#[test]
fn what_larik_does_not_run_is_left_out_and_reported() {
    let setup = Setup::new();
    let path = setup.in_project(".claude/settings.local.json");
    setup.write(
        &path,
        r#"{"hooks": {
            "PostToolBatch": [{"hooks": [{"type": "command", "command": "batch.sh"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "http", "url": "http://localhost:8080/hook"},
                {"type": "mcp_tool", "server": "s", "tool": "t"},
                {"type": "agent", "prompt": "check"},
                {"type": "webhook"},
                {"type": "command", "command": "pwsh.ps1", "shell": "powershell"},
                {"type": "command", "command": "kept.sh", "if": "Bash(git *)", "async": true}
            ]}]}}"#,
    );
    let hooks = setup.load();
    assert_eq!(commands(&hooks.matching(HookEvent::PreToolUse, &["Bash"])), ["kept.sh"]);
    let problems = hooks.problems();
    assert_eq!(problems.len(), 8, "{problems:?}");
    assert!(problems.iter().all(|problem| problem.starts_with(&path.display().to_string())), "{problems:?}");
    for needle in ["`PostToolBatch`", "`http`", "`mcp_tool`", "`agent`", "`webhook`", "powershell", "`if`", "`async`"] {
        assert!(problems.iter().any(|problem| problem.contains(needle)), "{needle} missing from {problems:?}");
    }
}

#[test]
fn malformed_hooks_are_errors_naming_the_file() {
    let cases = [
        ("{ not json", "key must be a string"),
        (r#"["hooks"]"#, "not a JSON object"),
        (r#"{"hooks": []}"#, "`hooks` must be an object"),
        (r#"{"hooks": {"PreToolUse": {"matcher": "Bash"}}}"#, "`PreToolUse` must be a list"),
        (r#"{"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}"#, "`matcher` must be a string"),
        (r#"{"hooks": {"PreToolUse": [{"matcher": "Edit(", "hooks": []}]}}"#, "not a valid regular expression"),
        (r#"{"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}"#, "`hooks` must be a list of handlers"),
        (r#"{"hooks": {"PreToolUse": [{"hooks": [{"command": "x.sh"}]}]}}"#, "`type` must be a string"),
        (r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}"#, "needs a `command`"),
        (r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": ""}]}]}}"#, "needs a `prompt`"),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}"#,
            "positive number",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": "60"}]}]}}"#,
            "number of seconds",
        ),
        (
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "args": [1]}]}]}}"#,
            "`args` must be a list of strings",
        ),
    ];
    for (json, expected) in cases {
        let setup = Setup::new();
        let path = setup.in_project(".larik/settings.json");
        setup.write(&setup.claude_user(), &pre_tool_use("Bash", "fine.sh"));
        setup.write(&path, json);
        let message = match setup.try_load() {
            Ok(hooks) => panic!("{json} loaded: {hooks:?}"),
            Err(error) => error.to_string(),
        };
        assert!(message.starts_with(&path.display().to_string()), "{message}");
        assert!(message.contains(expected), "{json}: {message}");
    }
}

#[test]
fn settings_without_hooks_and_absent_files_are_fine() {
    let setup = Setup::new();
    let hooks = setup.load();
    assert!(hooks.is_empty() && hooks.problems().is_empty());
    setup.write(&setup.larik_user(), r#"{"model": "claude-sonnet-4-5", "permissions": {"deny": ["Bash(rm *)"]}}"#);
    setup.write(&setup.in_project(".claude/settings.json"), r#"{"hooks": {}}"#);
    // A `.larik` that is a file, not a directory, holds no settings.
    setup.write(&setup.in_project(".larik"), "");
    let hooks = setup.load();
    assert!(hooks.is_empty() && hooks.problems().is_empty());
    assert_eq!(hooks.project_fingerprint(), None);
}

#[test]
fn exec_form_args_are_quoted_for_bash() {
    let setup = Setup::new();
    setup.write(&setup.claude_user(), r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "/usr/bin/check", "args": ["--tool", "it's $HOME"]}]}]}}"#);
    let hooks = setup.load();
    assert_eq!(
        commands(&hooks.matching(HookEvent::PreToolUse, &["Bash"])),
        [r"'/usr/bin/check' '--tool' 'it'\''s $HOME'"]
    );
}

#[test]
fn user_only_keeps_the_user_hooks() {
    let setup = Setup::new();
    setup.write(&setup.claude_user(), &pre_tool_use("Bash", "mine.sh"));
    setup.write(&setup.in_project(".claude/settings.json"), &pre_tool_use("Bash", "theirs.sh"));
    let hooks = setup.load();
    assert_eq!(commands(&hooks.project_handlers()), ["theirs.sh"]);
    let user = hooks.user_only();
    assert_eq!(commands(&user.matching(HookEvent::PreToolUse, &["Bash"])), ["mine.sh"]);
    assert!(user.project_handlers().is_empty());
    assert_eq!(user.project_fingerprint(), None);
    assert_eq!(commands(&hooks.matching(HookEvent::PreToolUse, &["Bash"])), ["mine.sh", "theirs.sh"]);
}

#[test]
fn a_project_in_the_home_directory_does_not_make_user_hooks_project_hooks() {
    let setup = Setup::new();
    setup.write(&setup.claude_user(), &pre_tool_use("Bash", "mine.sh"));
    let hooks =
        Hooks::load(&SettingsFiles::default(), &setup.home, &setup.env()).unwrap_or_else(|error| panic!("{error}"));
    let handlers = hooks.matching(HookEvent::PreToolUse, &["Bash"]);
    assert_eq!((commands(&handlers), handlers[0].scope), (vec!["mine.sh"], Scope::User));
    assert_eq!(hooks.project_fingerprint(), None);
}

#[test]
fn the_fingerprint_follows_what_project_hooks_would_run() {
    let setup = Setup::new();
    let project_file = setup.in_project(".claude/settings.json");
    let fingerprint = |setup: &Setup| setup.load().project_fingerprint();
    setup.write(&setup.claude_user(), &pre_tool_use("Bash", "mine.sh"));
    assert_eq!(fingerprint(&setup), None);

    setup.write(&project_file, &pre_tool_use("Bash", "check.sh"));
    let first = fingerprint(&setup).unwrap_or_else(|| panic!("no fingerprint"));
    assert_eq!(first.len(), 64);
    assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(fingerprint(&setup).as_deref(), Some(first.as_str()), "stable across loads");

    // The user's own hooks are not part of it.
    setup.write(&setup.claude_user(), &pre_tool_use("Bash", "mine-changed.sh"));
    setup.write(&setup.larik_user(), &pre_tool_use("Edit", "more.sh"));
    assert_eq!(fingerprint(&setup).as_deref(), Some(first.as_str()));

    // Moving the same definition to another project file does not change what runs.
    std::fs::remove_file(&project_file).unwrap_or_else(|error| panic!("{error}"));
    setup.write(&setup.in_project(".larik/settings.local.json"), &pre_tool_use("Bash", "check.sh"));
    assert_eq!(fingerprint(&setup).as_deref(), Some(first.as_str()));

    // Any change to a project definition does.
    let changes = [
        pre_tool_use("Bash", "check.sh --fix"),
        pre_tool_use("Bash|Edit", "check.sh"),
        r#"{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}]}}"#.to_owned(),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "timeout": 61}]}]}}"#.to_owned(),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "check.sh"}]}]}}"#.to_owned(),
    ];
    let mut seen = vec![first];
    for change in changes {
        setup.write(&setup.in_project(".larik/settings.local.json"), &change);
        let next = fingerprint(&setup).unwrap_or_else(|| panic!("no fingerprint for {change}"));
        assert!(!seen.contains(&next), "{change} gave a fingerprint seen before");
        seen.push(next);
    }
}

#[test]
fn the_fingerprint_ignores_the_order_of_definitions() {
    let setup = Setup::new();
    let group =
        |command: &str| serde_json::json!({"matcher": "Bash", "hooks": [{"type": "command", "command": command}]});
    let file = setup.in_project(".claude/settings.json");
    setup.write(&file, &serde_json::json!({"hooks": {"PreToolUse": [group("a.sh"), group("b.sh")]}}).to_string());
    let first = setup.load().project_fingerprint();
    setup.write(&file, &serde_json::json!({"hooks": {"PreToolUse": [group("b.sh"), group("a.sh")]}}).to_string());
    assert_eq!(setup.load().project_fingerprint(), first);
    assert!(first.is_some());
}
