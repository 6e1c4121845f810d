#![allow(clippy::unwrap_used, clippy::expect_used)]
//! kill -9 at random points of a turn that writes a file, records the session and runs a
//! command, a hundred times: afterwards the file holds its old or its new content (never a part),
//! no temp file is left in the project, every session file loads, and no process the agent
//! started survives it.

use std::time::Duration;

use larik_core::session::store::SessionStore;
use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

const KILLS: usize = 100;
const MARKER: &str = "larik-kill-test-marker";

/// The content of version `n`: large enough that a write takes a moment, one byte repeated so
/// a mix of versions shows.
fn version(n: usize) -> String {
    let byte = char::from(b'a' + u8::try_from(n % 26).unwrap());
    format!("{}\n", byte.to_string().repeat(48 * 1024))
}

/// What the project holds besides a.txt.
fn stray(root: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "a.txt")
        .collect()
}

/// An empty directory the sandbox holds over an absent protected path while a command runs.
fn is_stand_in(path: &std::path::Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|meta| meta.is_dir() && meta.modified().ok() == Some(std::time::UNIX_EPOCH + Duration::from_secs(1)))
        && std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
}

/// Processes whose command line carries the marker.
fn survivors() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if entry.file_name().to_str().is_some_and(|name| name.chars().all(|c| c.is_ascii_digit()))
            && let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
        {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(MARKER) {
                found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[tokio::test]
async fn a_hundred_kills_lose_no_file_leave_no_temp_file_and_no_process() {
    let sandbox = Sandbox::new();
    let settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, json!({"permissions": {"defaultMode": "acceptEdits"}}).to_string()).unwrap();
    let root = sandbox.project_path();
    std::fs::write(root.join("a.txt"), version(0)).unwrap();
    // A pseudo-random delay per kill, from the clock: varied, and printed to reproduce.
    let mut seed = u64::try_from(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() % 1_000_003,
    )
    .unwrap();
    eprintln!("kill delays seeded with {seed}");
    let mut written = 0;
    for kill in 1..=KILLS {
        // An existing file is written only after a read, as the model would.
        let steps = vec![
            Step::tool("toolu_r", "read", json!({"path": "a.txt"})),
            Step::tool("toolu_w", "write", json!({"path": "a.txt", "content": version(kill)})),
            Step::tool("toolu_b", "bash", json!({"command": format!("sleep 30 # {MARKER}"), "description": "wait"})),
            Step::text("done"),
        ];
        let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
        let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
        agent.initialize().await;
        let session = agent.new_session(&root).await;
        // What the sandbox made in the project for a command killed with the agent is gone once
        // a session starts again.
        assert!(stray(&root).is_empty(), "kill {}: left in the project: {:?}", kill - 1, stray(&root));
        let _ = agent
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": "rewrite a.txt, then wait"}]}),
            )
            .await;
        // From the moment the model's first call is shown: the kill falls before, during or
        // after the write, or while the command runs.
        loop {
            let message = agent.next().await;
            if message["params"]["update"]["sessionUpdate"] == "tool_call" {
                break;
            }
        }
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let delay = Duration::from_millis((seed >> 33) % 300);
        tokio::time::sleep(delay).await;
        agent.child.start_kill().unwrap();
        agent.child.wait().await.unwrap();

        let content = std::fs::read_to_string(root.join("a.txt")).unwrap();
        let is_new = content == version(kill);
        assert!(
            is_new || (0..kill).any(|earlier| content == version(earlier)),
            "kill {kill} after {delay:?}: a.txt is neither its old nor its new content ({} bytes)",
            content.len()
        );
        written += usize::from(is_new);
        nothing_left_behind(&root, kill).await;
    }
    // One more session start sweeps what the last kill left.
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
    agent.initialize().await;
    agent.new_session(&root).await;
    assert!(stray(&root).is_empty(), "{:?}", stray(&root));
    agent.close_stdin();
    agent.wait_exit().await;
    every_session_loads(sandbox.home.path());
    eprintln!("{written} of {KILLS} kills came after the write");
    assert!(written > 0 && written < KILLS, "the kills fell before and after the write: {written} of {KILLS}");
}

/// No temp file of an interrupted write and no process outlives the agent.
async fn nothing_left_behind(root: &std::path::Path, kill: usize) {
    // No temp file of an interrupted write, ever.
    // (The sandbox's stand-ins, whole or half made, are swept when a session starts again.)
    let temp: Vec<String> = stray(root)
        .into_iter()
        .filter(|name| !is_stand_in(&root.join(name)) && !name.starts_with(".larik-stand-in-"))
        .collect();
    assert!(temp.is_empty(), "kill {kill}: left in the project: {temp:?}");
    let mut waited = 0;
    while !survivors().is_empty() && waited < 40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert!(survivors().is_empty(), "kill {kill}: outlived the agent: {:?}", survivors());
}

/// A session file per run, each of which loads as a conversation.
fn every_session_loads(home: &std::path::Path) {
    let store = SessionStore::new(home.join(".local/share/larik/sessions"));
    let files: Vec<_> = std::fs::read_dir(home.join(".local/share/larik/sessions"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    assert_eq!(files.len(), KILLS + 1, "a session file per run");
    for file in files {
        let id = file.path().file_stem().unwrap().to_string_lossy().into_owned();
        let stored = store.load(&id).unwrap_or_else(|error| panic!("{id} does not load: {error}"));
        assert!(!stored.records.is_empty(), "{id} lost its meta record");
        // Whatever was written before the kill reads back as a conversation.
        let _ = stored.messages();
    }
}
