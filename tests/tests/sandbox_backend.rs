#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The binary under test names the backend that confines its commands, and where it has none
//! (a build without the `linux` feature, as on a system Larik has no sandbox for) nothing runs
//! unconfined without asking: the editor hears the sandbox is off, and bash asks.
//!
//! `LARIK_EXPECT_BACKEND=none` says the binary in `LARIK_BIN` was built without a backend
//! (tests/portable/run.sh); otherwise it is the default build, with the Linux backend.

use std::process::Command;

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

fn expects_no_backend() -> bool {
    std::env::var("LARIK_EXPECT_BACKEND").is_ok_and(|value| value == "none")
}

#[test]
fn sandbox_check_names_the_backend() {
    let sandbox = Sandbox::new();
    let mut command = Command::new(larik_tests::harness::larik_bin());
    command.args(["sandbox", "check"]).current_dir(sandbox.project_path()).env_clear();
    for (key, value) in sandbox.base_env() {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let report = String::from_utf8(output.stdout).unwrap();
    if expects_no_backend() {
        assert_eq!(output.status.code(), Some(1), "{report}");
        assert!(report.contains("Backend:     none\n"), "{report}");
        assert!(report.contains("Sandbox:     off (this build of Larik has no sandbox"), "{report}");
        assert!(report.contains("every command asks first"), "{report}");
    } else {
        assert!(output.status.success(), "{report}");
        assert!(report.contains("Backend:     Linux namespaces, Landlock and seccomp\n"), "{report}");
        assert!(report.contains("Sandbox:     on (Linux namespaces, Landlock and seccomp), checked"), "{report}");
    }
}

#[tokio::test]
async fn without_a_backend_every_command_asks_and_a_refused_one_does_not_run() {
    let sandbox = Sandbox::new();
    let marker = sandbox.project_path().join("ran.txt");
    let mock = MockLlm::start(Scenario {
        responses: vec![Step::tool("t0", "bash", json!({"command": "echo ran > ran.txt"})), Step::text("done")],
    })
    .await
    .unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (response, _) = agent.response(id).await;
    let session = response["result"]["sessionId"].as_str().unwrap().to_owned();
    let state = agent.sandbox_state().await["sandbox"].clone();
    let mut asked = 0;
    let (_, updates) = agent
        .prompt(&session, "try", |_| {
            asked += 1;
            "reject_once"
        })
        .await;
    let said = serde_json::to_string(&updates).unwrap();
    if expects_no_backend() {
        assert_eq!(state["enforced"], false, "{state}");
        assert!(state["reason"].as_str().unwrap().contains("no sandbox"), "{state}");
        assert_eq!(asked, 1, "bash asked instead of running unconfined");
        assert!(said.contains("The shell sandbox is off"), "the user hears it: {said}");
        assert!(!marker.exists(), "the rejected command did not run");
    } else {
        assert_eq!(state["enforced"], true, "{state}");
        assert_eq!(asked, 0, "a sandboxed command runs without asking");
        assert!(marker.exists(), "the sandboxed command ran");
    }
}
