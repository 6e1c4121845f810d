#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Claude Code's sandbox keys over ACP with the real binary: `sandbox.excludedCommands` (those
//! commands run outside and ask), `sandbox.allowUnsandboxedCommands: false` (a call cannot opt
//! out), `sandbox.failIfUnavailable` (where the sandbox cannot hold, commands are refused), each
//! where a user keeps it or, for what narrows, where a repository writes it.

use std::path::Path;

use larik_tests::harness::Sandbox;
use larik_tests::mock_llm::Step;
use larik_tests::turns::rejected_turn;
use serde_json::{Value, json};

fn claude_settings(dir: &Path, settings: &Value) {
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).unwrap();
}

fn result(requests: &[Value], index: usize) -> String {
    requests[index]["messages"].as_array().unwrap().last().unwrap()["content"].to_string()
}

#[tokio::test]
async fn an_excluded_command_runs_outside_the_sandbox_and_asks_first() {
    let sandbox = Sandbox::new();
    let steps = || {
        vec![
            Step::tool("t1", "bash", json!({"command": "touch excluded.txt"})),
            Step::tool("t2", "bash", json!({"command": "echo ok > confined.txt"})),
            Step::text("done"),
        ]
    };
    claude_settings(sandbox.home.path(), &json!({"sandbox": {"excludedCommands": ["touch"]}}));
    let turn = rejected_turn(&sandbox, &[], steps()).await;
    assert_eq!(turn.asked.len(), 1, "only the excluded command asked: {:?}", turn.asked);
    assert!(turn.asked[0]["toolCall"].to_string().contains("touch excluded.txt"), "{}", turn.asked[0]);
    assert!(!sandbox.project.path().join("excluded.txt").exists());
    assert!(sandbox.project.path().join("confined.txt").exists(), "the rest still runs confined, unasked");
    // A repository cannot exclude commands (they would ask, but would then run unconfined).
    let other = Sandbox::new();
    claude_settings(other.project.path(), &json!({"sandbox": {"excludedCommands": ["echo"]}}));
    let turn = rejected_turn(&other, &[], steps()).await;
    let said = serde_json::to_string(&turn.updates).unwrap();
    assert!(said.contains("`sandbox.excludedCommands`"), "{said}");
}

#[tokio::test]
async fn a_repository_may_take_away_the_calls_choice_to_leave_the_sandbox() {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().join("escaped.txt");
    let opt_out = || {
        vec![
            Step::tool("t1", "bash", json!({"command": format!("touch {}", target.display()), "sandbox": false})),
            Step::text("done"),
        ]
    };
    // Without the key, a call that opts out asks (rejected here).
    let sandbox = Sandbox::new();
    let turn = rejected_turn(&sandbox, &[], opt_out()).await;
    assert_eq!(turn.asked.len(), 1, "{:?}", turn.asked);
    // With it, the call runs confined: unasked, and the write outside the project fails.
    claude_settings(sandbox.project.path(), &json!({"sandbox": {"allowUnsandboxedCommands": false}}));
    let turn = rejected_turn(&sandbox, &[], opt_out()).await;
    assert!(turn.asked.is_empty(), "{:?}", turn.asked);
    assert!(!target.exists(), "confined: {}", result(&turn.requests, 1));
}

#[tokio::test]
async fn where_the_sandbox_cannot_hold_and_settings_require_it_commands_are_refused() {
    let sandbox = Sandbox::new();
    claude_settings(sandbox.project.path(), &json!({"sandbox": {"failIfUnavailable": true}}));
    let simulated = [("LARIK_SANDBOX_SIMULATE".to_owned(), "no-landlock".to_owned())];
    let steps = vec![Step::tool("t1", "bash", json!({"command": "echo ran > ran.txt"})), Step::text("done")];
    let turn = rejected_turn(&sandbox, &simulated, steps).await;
    assert!(turn.asked.is_empty(), "refused, not asked: {:?}", turn.asked);
    assert!(!sandbox.project.path().join("ran.txt").exists());
    assert!(result(&turn.requests, 1).contains("sandbox.failIfUnavailable"), "{}", result(&turn.requests, 1));
    // Where it holds, the same settings change nothing.
    let steps = vec![Step::tool("t1", "bash", json!({"command": "echo ran > ran.txt"})), Step::text("done")];
    let turn = rejected_turn(&sandbox, &[], steps).await;
    assert!(turn.asked.is_empty());
    assert!(sandbox.project.path().join("ran.txt").exists());
}

#[tokio::test]
async fn filesystem_keys_shape_what_sandboxed_commands_may_write_and_read() {
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cache = outside.path().join("cache");
    let planted = outside.path().join("planted");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(&planted).unwrap();
    let aws = sandbox.home.path().join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(aws.join("credentials"), "aws_secret_access_key = AKIA-SECRET\n").unwrap();
    std::fs::write(aws.join("config"), "region = eu-west-1\n").unwrap();
    let docs = sandbox.project.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("readme.md"), "original\n").unwrap();
    claude_settings(
        sandbox.home.path(),
        &json!({"sandbox": {"filesystem": {"allowWrite": [cache], "denyRead": ["~/.aws"], "allowRead": ["~/.aws/config"]}}}),
    );
    // The repository narrows (docs/ read-only), and cannot widen (its allowWrite is ignored).
    claude_settings(
        sandbox.project.path(),
        &json!({"sandbox": {"filesystem": {"denyWrite": ["./docs"], "allowWrite": [planted]}}}),
    );
    let bash = |id: &str, command: String| Step::tool(id, "bash", json!({"command": command}));
    let steps = vec![
        bash("t1", format!("touch {}/built.o", cache.display())),
        bash("t2", "cat ~/.aws/credentials; ls -a ~/.aws; cat ~/.aws/config".into()),
        bash("t3", "echo changed > docs/readme.md; mv docs docs-moved".into()),
        Step::tool("t4", "write", json!({"path": "docs/new.md", "content": "x"})),
        bash("t5", format!("touch {}/x", planted.display())),
        Step::text("done"),
    ];
    let turn = rejected_turn(&sandbox, &[], steps).await;
    assert!(cache.join("built.o").exists(), "{}", result(&turn.requests, 1));
    let read = result(&turn.requests, 2);
    assert!(!read.contains("AKIA-SECRET") && read.contains("region = eu-west-1"), "{read}");
    assert_eq!(std::fs::read_to_string(docs.join("readme.md")).unwrap(), "original\n", "{}", result(&turn.requests, 3));
    assert!(!sandbox.project.path().join("docs-moved").exists());
    assert!(result(&turn.requests, 4).contains("protected"), "{}", result(&turn.requests, 4));
    assert!(!planted.join("x").exists(), "{}", result(&turn.requests, 5));
    let said = serde_json::to_string(&turn.updates).unwrap();
    assert!(said.contains("`sandbox.filesystem.allowWrite`"), "{said}");
}
