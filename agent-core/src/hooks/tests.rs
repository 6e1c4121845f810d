//! `run_hooks` end to end: real `bash -c` and Python hooks in a temporary project, and prompt
//! hooks answered by a scripted evaluator.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("tempdir: {error}"));
    // Canonical, so the hook's `pwd` and the path compare equal.
    let path = std::fs::canonicalize(dir.path()).unwrap_or_else(|error| panic!("canonicalize: {error}"));
    (dir, path)
}

fn command(event: HookEvent, command: &str, timeout: Duration) -> HookHandler {
    HookHandler {
        plugin: None,
        event,
        matcher: None,
        kind: HandlerKind::Command { command: command.into() },
        timeout,
        scope: Scope::User,
        source: PathBuf::from("settings.json"),
    }
}

fn prompt(event: HookEvent, prompt: &str) -> HookHandler {
    HookHandler {
        kind: HandlerKind::Prompt { prompt: prompt.into(), model: None },
        timeout: DEFAULT_PROMPT_TIMEOUT,
        ..command(event, "unused", DEFAULT_PROMPT_TIMEOUT)
    }
}

/// A PreToolUse payload as the turn loop builds it, in Claude Code's names.
fn bash_payload(command_line: &str) -> Value {
    json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": command_line}, "tool_use_id": "call_1"
    })
}

fn event_payload(event: HookEvent) -> Value {
    json!({"session_id": "s1", "hook_event_name": event.name(), "cwd": "/tmp"})
}

async fn run_in(dir: &Path, handlers: &[HookHandler], payload: &Value) -> HookOutcome {
    let cancel = CancellationToken::new();
    run_hooks(handlers, payload, &HookRunEnv { project_dir: dir, cancel: &cancel, evaluator: None }).await
}

async fn run_one(event: HookEvent, script: &str, payload: &Value) -> HookOutcome {
    let (_dir, path) = project();
    run_in(&path, &[command(event, script, Duration::from_secs(20))], payload).await
}

fn deny(reason: &str) -> Option<HookPermission> {
    Some(HookPermission { decision: PermissionDecision::Deny, reason: Some(reason.into()) })
}

fn text(source: &str, text: &str) -> HookText {
    HookText { source: source.into(), text: text.into() }
}

/// Whether the process is gone: absent, or a zombie waiting for its parent.
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Waits for an event outside our control (a file a hook writes, a process dying), up to a deadline.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn read_pid(path: &Path) -> i32 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    text.trim().parse().unwrap_or_else(|error| panic!("pid {text:?}: {error}"))
}

#[tokio::test]
async fn no_handlers_say_nothing() {
    let (_dir, path) = project();
    assert_eq!(run_in(&path, &[], &bash_payload("ls")).await, HookOutcome::default());
}

#[tokio::test]
async fn exit_0_with_decision_block_blocks_with_the_reason() {
    let script = r#"echo '{"decision":"block","reason":"x"}'"#;
    let outcome = run_one(HookEvent::PostToolUse, script, &event_payload(HookEvent::PostToolUse)).await;
    assert_eq!(outcome.block.as_deref(), Some("x"));
    assert_eq!(outcome.feedback, vec![text(script, "x")]);
    assert!(outcome.messages.is_empty(), "{:?}", outcome.messages);
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_and_denies_a_tool_call() {
    let outcome = run_one(HookEvent::PreToolUse, "echo nope >&2; exit 2", &bash_payload("rm -rf /")).await;
    assert_eq!(outcome.block.as_deref(), Some("nope"));
    assert_eq!(outcome.permission, deny("nope"));
    assert!(outcome.feedback.is_empty());
}

#[tokio::test]
async fn exit_2_cannot_be_overridden_by_json() {
    let script = r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"},"systemMessage":"checked"}'; echo 'protected path' >&2; exit 2"#;
    let outcome = run_one(HookEvent::PreToolUse, script, &bash_payload("ls")).await;
    assert_eq!(outcome.permission, deny("protected path"));
    assert_eq!(outcome.block.as_deref(), Some("protected path"));
    assert_eq!(outcome.messages, vec!["checked".to_owned()]);
}

#[tokio::test]
async fn exit_2_on_post_tool_use_is_feedback_for_the_model() {
    let script = "echo 'clippy: 2 warnings' >&2; exit 2";
    let outcome = run_one(HookEvent::PostToolUse, script, &event_payload(HookEvent::PostToolUse)).await;
    assert_eq!(outcome.feedback, vec![text(script, "clippy: 2 warnings")]);
}

#[tokio::test]
async fn exit_2_on_session_start_only_tells_the_user() {
    let outcome =
        run_one(HookEvent::SessionStart, "echo 'no venv' >&2; exit 2", &event_payload(HookEvent::SessionStart)).await;
    assert_eq!((outcome.block, outcome.permission), (None, None));
    assert_eq!(outcome.messages, vec!["hook `echo 'no venv' >&2; exit 2`: no venv".to_owned()]);
}

#[tokio::test]
async fn other_exit_codes_are_non_blocking_errors() {
    let script = "echo 'first problem' >&2; echo 'second' >&2; exit 1";
    let outcome = run_one(HookEvent::PreToolUse, script, &bash_payload("ls")).await;
    assert_eq!((outcome.block, outcome.permission), (None, None));
    assert_eq!(outcome.messages, vec![format!("hook `{script}` failed (exit 1): first problem")]);
    let outcome = run_one(HookEvent::PreToolUse, "/nonexistent/hook.sh", &bash_payload("ls")).await;
    assert!(
        outcome.messages[0].starts_with("hook `/nonexistent/hook.sh` failed (exit 127): "),
        "{:?}",
        outcome.messages
    );
    let outcome = run_one(HookEvent::Stop, "kill -9 $$", &event_payload(HookEvent::Stop)).await;
    assert_eq!(outcome.messages, vec!["hook `kill -9 $$` failed (killed by a signal)".to_owned()]);
}

#[tokio::test]
async fn valid_json_decides_whatever_the_exit_code() {
    let script = r#"echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"not here"}}'; echo oops >&2; exit 1"#;
    let outcome = run_one(HookEvent::PreToolUse, script, &bash_payload("ls")).await;
    assert_eq!(outcome.permission, deny("not here"));
    assert!(outcome.messages.is_empty(), "{:?}", outcome.messages);
}

#[tokio::test]
async fn invalid_json_is_reported_and_ignored() {
    let outcome = run_one(HookEvent::PreToolUse, r#"echo '{"decision": "nope"}'"#, &bash_payload("ls")).await;
    assert_eq!((outcome.block, outcome.permission), (None, None));
    assert_eq!(outcome.messages.len(), 1);
    assert!(outcome.messages[0].contains("printed invalid JSON"), "{:?}", outcome.messages);
}

#[tokio::test]
async fn plain_stdout_is_context_only_where_claude_code_reads_it() {
    for event in [HookEvent::UserPromptSubmit, HookEvent::SessionStart] {
        let outcome = run_one(event, "echo 'on branch main'", &event_payload(event)).await;
        assert_eq!(outcome.context, vec![text("echo 'on branch main'", "on branch main")], "{event:?}");
    }
    for event in [HookEvent::PreToolUse, HookEvent::PostToolUse, HookEvent::Stop] {
        let outcome = run_one(event, "echo 'debug output'", &event_payload(event)).await;
        assert_eq!(outcome, HookOutcome::default(), "{event:?}");
    }
}

#[tokio::test]
async fn json_output_fields_reach_the_outcome() {
    let script = r#"echo '{"continue": false, "stopReason": "budget spent", "systemMessage": "stopping",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "check it",
        "updatedInput": {"command": "ls -la"}, "additionalContext": "ls is aliased"}}'"#;
    let outcome = run_one(HookEvent::PreToolUse, script, &bash_payload("ls")).await;
    assert_eq!(outcome.stop.as_deref(), Some("budget spent"));
    assert_eq!(outcome.messages, vec!["stopping".to_owned()]);
    assert_eq!(
        outcome.permission,
        Some(HookPermission { decision: PermissionDecision::Ask, reason: Some("check it".into()) })
    );
    assert_eq!(outcome.updated_input, Some(json!({"command": "ls -la"})));
    assert_eq!(outcome.context, vec![text(script, "ls is aliased")]);
}

#[tokio::test]
async fn a_python_hook_reads_the_payload_from_stdin() {
    let script = r#"python3 -c 'import json, sys
d = json.load(sys.stdin)
bad = "rm -rf" in d["tool_input"]["command"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": d["hook_event_name"],
    "permissionDecision": "deny" if bad else "allow", "permissionDecisionReason": d["tool_name"] + " " + d["tool_use_id"]}}))'"#;
    let outcome = run_one(HookEvent::PreToolUse, script, &bash_payload("rm -rf build")).await;
    assert_eq!(outcome.permission, deny("Bash call_1"));
    let outcome = run_one(HookEvent::PreToolUse, script, &bash_payload("cargo test")).await;
    assert_eq!(
        outcome.permission,
        Some(HookPermission { decision: PermissionDecision::Allow, reason: Some("Bash call_1".into()) })
    );
}

#[tokio::test]
async fn hooks_run_in_the_project_with_its_directory_in_the_environment() {
    let (_dir, path) = project();
    let script =
        r#"printf '%s|%s|%s' "$CLAUDE_PROJECT_DIR" "$LARIK_PROJECT_DIR" "$(pwd)"; if [ -t 0 ]; then echo ' tty'; fi"#;
    let outcome = run_in(
        &path,
        &[command(HookEvent::SessionStart, script, Duration::from_secs(20))],
        &event_payload(HookEvent::SessionStart),
    )
    .await;
    let shown = path.display();
    assert_eq!(outcome.context, vec![text(script, &format!("{shown}|{shown}|{shown}"))]);
}

#[tokio::test]
async fn a_timeout_kills_the_hooks_whole_group_and_the_turn_goes_on() {
    let (_dir, path) = project();
    let script = r#"sleep 30 & echo $! > "$CLAUDE_PROJECT_DIR/child.pid"; wait"#;
    let started = Instant::now();
    let outcome =
        run_in(&path, &[command(HookEvent::PreToolUse, script, Duration::from_secs(1))], &bash_payload("ls")).await;
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!((outcome.block, outcome.permission), (None, None));
    assert_eq!(outcome.messages, vec![format!("hook `{script}` timed out after 1 s and was stopped")]);
    let child = read_pid(&path.join("child.pid"));
    wait_until("the background sleep to die", || is_dead(child)).await;
}

#[tokio::test]
async fn cancel_kills_running_hooks() {
    let (_dir, path) = project();
    let pid_file = path.join("child.pid");
    let script = r#"sleep 30 & echo $! > "$CLAUDE_PROJECT_DIR/child.pid.tmp"; mv child.pid.tmp child.pid; wait"#;
    let handlers = [command(HookEvent::Stop, script, Duration::from_secs(60))];
    let cancel = CancellationToken::new();
    let env = HookRunEnv { project_dir: &path, cancel: &cancel, evaluator: None };
    let started = Instant::now();
    let payload = event_payload(HookEvent::Stop);
    let cancel_once_started = async {
        wait_until("the hook to start its child", || pid_file.exists()).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(run_hooks(&handlers, &payload, &env), cancel_once_started);
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    assert_eq!(
        outcome.messages,
        vec![format!("hook `{}` was stopped: the turn was cancelled", super::reply::short(script))]
    );
    let child = read_pid(&pid_file);
    wait_until("the background sleep to die", || is_dead(child)).await;
}

#[tokio::test]
async fn hooks_of_one_event_run_in_parallel() {
    let (_dir, path) = project();
    // Each announces itself, then waits up to 8 s for the other; run one after the other, the
    // first would give up and fail.
    let waiting_for = |me: &str, other: &str| {
        format!("touch {me}; for i in $(seq 160); do [ -e {other} ] && echo {me} && exit 0; sleep 0.05; done; exit 1")
    };
    let handlers = [
        command(HookEvent::UserPromptSubmit, &waiting_for("a", "b"), Duration::from_secs(20)),
        command(HookEvent::UserPromptSubmit, &waiting_for("b", "a"), Duration::from_secs(20)),
    ];
    let started = Instant::now();
    let outcome = run_in(&path, &handlers, &event_payload(HookEvent::UserPromptSubmit)).await;
    assert!(started.elapsed() < Duration::from_secs(8), "took {:?}", started.elapsed());
    assert!(outcome.messages.is_empty(), "{:?}", outcome.messages);
    let texts: Vec<&str> = outcome.context.iter().map(|context| context.text.as_str()).collect();
    assert_eq!(texts, ["a", "b"]);
}

#[tokio::test]
async fn a_background_child_holding_stdout_does_not_hold_the_turn() {
    let (_dir, path) = project();
    let script = "sleep 5 & echo started";
    let started = Instant::now();
    let outcome = run_in(
        &path,
        &[command(HookEvent::SessionStart, script, Duration::from_secs(20))],
        &event_payload(HookEvent::SessionStart),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(4), "took {:?}", started.elapsed());
    assert_eq!(outcome.context, vec![text(script, "started")]);
}

#[tokio::test]
async fn large_payloads_and_outputs_do_not_stall() {
    let (_dir, path) = project();
    // The hook never reads its stdin, and prints far more than a pipe holds.
    let script = "head -c 3000000 /dev/zero | tr '\\0' x";
    let mut payload = event_payload(HookEvent::SessionStart);
    payload["blob"] = json!("y".repeat(1 << 20));
    let outcome = run_in(&path, &[command(HookEvent::SessionStart, script, Duration::from_secs(20))], &payload).await;
    assert!(outcome.messages.is_empty(), "{:?}", outcome.messages);
    assert!(outcome.context[0].text.starts_with(&"x".repeat(MAX_TEXT_CHARS)));
    assert!(outcome.context[0].text.len() < MAX_TEXT_CHARS + 100);
}

#[tokio::test]
async fn the_payloads_event_decides_how_output_is_read() {
    // A handler defined for UserPromptSubmit run with a Stop payload: the payload's event
    // decides, and Stop does not read plain stdout as context.
    let outcome = run_one(HookEvent::UserPromptSubmit, "echo hello", &event_payload(HookEvent::Stop)).await;
    assert!(outcome.context.is_empty());
}

/// Answers every prompt hook with one reply.
struct Fixed(&'static str);

#[async_trait::async_trait]
impl PromptEvaluator for Fixed {
    async fn evaluate(&self, _model: Option<&str>, prompt: &str) -> Result<String, crate::llm::ProviderError> {
        // The payload must have been put in place of $ARGUMENTS.
        if prompt.contains("$ARGUMENTS") || !prompt.contains("\"tool_name\":\"Bash\"") {
            return Err(crate::llm::ProviderError::BadRequest { message: format!("unexpanded prompt: {prompt}") });
        }
        Ok(self.0.to_owned())
    }
}

#[tokio::test]
async fn prompt_and_command_hooks_combine() {
    let (_dir, path) = project();
    let cancel = CancellationToken::new();
    let evaluator = Fixed("The command deletes files.\n```json\n{\"ok\": false, \"reason\": \"deletes files\"}\n```");
    let env = HookRunEnv { project_dir: &path, cancel: &cancel, evaluator: Some(&evaluator) };
    let allow = r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'"#;
    let handlers = [
        command(HookEvent::PreToolUse, allow, Duration::from_secs(20)),
        prompt(HookEvent::PreToolUse, "Judge: $ARGUMENTS"),
    ];
    let outcome = run_hooks(&handlers, &bash_payload("rm -rf src"), &env).await;
    assert_eq!(outcome.permission, deny("deletes files"));
    assert_eq!(outcome.block.as_deref(), Some("deletes files"));
    assert!(outcome.messages.is_empty(), "{:?}", outcome.messages);
}

#[tokio::test]
async fn prompt_hooks_fail_open() {
    let (_dir, path) = project();
    let cancel = CancellationToken::new();
    let handlers = [prompt(HookEvent::PreToolUse, "Judge: $ARGUMENTS")];
    let garbage = Fixed("I cannot decide.");
    for evaluator in [None, Some(&garbage as &dyn PromptEvaluator)] {
        let env = HookRunEnv { project_dir: &path, cancel: &cancel, evaluator };
        let outcome = run_hooks(&handlers, &bash_payload("rm -rf src"), &env).await;
        assert_eq!((outcome.permission, outcome.block), (None, None));
        assert_eq!(outcome.messages.len(), 1, "{:?}", outcome.messages);
    }
}
