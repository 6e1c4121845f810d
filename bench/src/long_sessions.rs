//! Figures of long sessions: a 2,000-turn session that compacts on its own (the agent's memory
//! stays flat and every request stays under the window), and checkpoints of a 10,000-file
//! project (the first, the incremental ones, their storage, and an undo).

use std::time::{Duration, Instant};

use larik_core::checkpoints::Checkpoints;
use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

use crate::process::memory_kib;
use crate::stats::{Row, duration_row};

const WINDOW_TOKENS: u64 = 20_000;

/// 2,000 turns in a 20,000-token window compacting at half of it.
pub async fn compaction() -> anyhow::Result<Vec<Row>> {
    let turns = 2_000;
    let sandbox = Sandbox::new();
    let settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap_or(sandbox.home.path()))?;
    std::fs::write(&settings, json!({"contextWindow": WINDOW_TOKENS, "compaction": {"threshold": 0.5}}).to_string())?;
    // Summaries first: a step with `when` is only taken by a summarizer's request, and the
    // answers after them are taken in order by the others.
    let answer = "A paragraph of an answer that takes some room in the conversation. ".repeat(20);
    let mut steps: Vec<Step> = (0..turns / 4)
        .map(|_| Step {
            when: Some("<transcript".into()),
            ..Step::text("NOTES: the user asks, the agent answers at length; nothing is pending.")
        })
        .collect();
    steps.extend((0..turns).map(|_| Step::text(&answer)));
    let mock = MockLlm::start(Scenario { responses: steps }).await?;
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let pid = agent.child.id().unwrap_or(0);
    let (mut at_10, mut at_end) = (0.0, 0.0);
    for turn in 1..=turns {
        agent.prompt(&session, "Tell me more about it, at length please.", |_| "allow_once").await;
        if turn == 10 {
            at_10 = memory_kib(pid).0 as f64 / 1024.0;
        }
        if turn == turns {
            at_end = memory_kib(pid).0 as f64 / 1024.0;
        }
    }
    agent.close_stdin();
    agent.wait_exit().await;
    let requests = mock.requests();
    let summaries = requests.iter().filter(|request| request.to_string().contains("<transcript")).count();
    let largest = requests.iter().map(|request| request.to_string().len() as u64 / 4).max().unwrap_or(0);
    Ok(vec![
        Row::single(
            "compaction: RSS at turn 10 → 2,000 (20k-token window)",
            format!("{at_10:.1} → {at_end:.1} MiB ({:.2}×)", at_end / at_10.max(0.1)),
            "≤ 1.5×",
        ),
        Row::single("compaction: compactions in 2,000 turns", summaries.to_string(), ""),
        Row::single(
            "compaction: largest request (bytes / 4)",
            format!("{largest} tokens of {WINDOW_TOKENS}"),
            "< window",
        ),
    ])
}

/// A project of 10,000 files in 100 directories, in a git repository.
fn project(root: &std::path::Path) -> anyhow::Result<()> {
    for dir in 0..100 {
        let dir_path = root.join(format!("src/module_{dir:03}"));
        std::fs::create_dir_all(&dir_path)?;
        for file in 0..100 {
            let body = format!("// module {dir}, file {file}\n{}", "pub fn item() -> u32 { 42 }\n".repeat(30));
            std::fs::write(dir_path.join(format!("file_{file:03}.rs")), body)?;
        }
    }
    git2::Repository::init(root)?;
    Ok(())
}

fn touch_some(root: &std::path::Path, round: usize) -> anyhow::Result<()> {
    for file in 0..10 {
        std::fs::write(
            root.join(format!("src/module_{file:03}/file_{round:03}.rs")),
            format!("// changed in round {round}\n"),
        )?;
    }
    Ok(())
}

fn size_of(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}

pub async fn checkpoints() -> anyhow::Result<Vec<Row>> {
    let project_dir = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    let root = project_dir.path();
    project(root)?;
    let checkpoints = Checkpoints::new(root, data.path(), "bench");
    checkpoints.begin_turn("first", 0);
    let started = Instant::now();
    checkpoints.before_command().await;
    let first = started.elapsed();
    let after_first = size_of(&data.path().join("checkpoints"));
    touch_some(root, 0)?;
    checkpoints.end_turn().await;
    let mut incremental: Vec<Duration> = Vec::new();
    for round in 1..=5 {
        checkpoints.begin_turn("again", round);
        let started = Instant::now();
        checkpoints.before_command().await;
        incremental.push(started.elapsed());
        touch_some(root, round)?;
        checkpoints.end_turn().await;
    }
    let total = size_of(&data.path().join("checkpoints"));
    let started = Instant::now();
    let undone = checkpoints.undo(None).await.map_err(anyhow::Error::msg)?;
    let undo = started.elapsed();
    let project_bytes = size_of(root) - size_of(&root.join(".git"));
    Ok(vec![
        duration_row("checkpoint of 10,000 files: the first", &[first], "(every file read once)"),
        duration_row("checkpoint of 10,000 files: incremental (10 changed)", &incremental, "< 100 ms"),
        Row::single(
            "checkpoints: storage, first → after 6",
            format!(
                "{:.1} → {:.1} MiB (project {:.1} MiB)",
                after_first as f64 / 1_048_576.0,
                total as f64 / 1_048_576.0,
                project_bytes as f64 / 1_048_576.0
            ),
            "(loose zlib objects)",
        ),
        duration_row(
            &format!("undo of the last turn ({} files)", undone.files.restored.len() + undone.files.removed.len()),
            &[undo],
            "< 200 ms",
        ),
    ])
}
