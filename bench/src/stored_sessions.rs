//! Stored sessions: 10,000 session files of one project on disk (ten exchanges each, a damaged
//! file among them), and how long `session/list` (the first page and the last), `session/load`
//! (with its replay) and `session/resume` take for an editor.

use std::time::{Duration, Instant};

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario};
use serde_json::{Value, json};

use crate::stats::{Row, duration_row};

const STORED: usize = 10_000;
const RUNS: usize = 10;

pub async fn ten_thousand() -> anyhow::Result<Vec<Row>> {
    let sandbox = Sandbox::new();
    sandbox.store_sessions(STORED, 10);
    std::fs::write(sandbox.sessions_dir().join("sess_damaged.jsonl"), [0xff, 0xfe, b'\n'])?;
    let cwd = sandbox.project_path();
    let mock = MockLlm::start(Scenario::default()).await?;
    let mut agent = Agent::spawn(&cwd, &sandbox.env(mock.url()));
    agent.initialize().await;

    let (first_list, _) = timed(&mut agent, "session/list", json!({"cwd": cwd})).await?;
    let mut lists = Vec::new();
    let mut last_pages = Vec::new();
    let mut loads = Vec::new();
    let mut resumes = Vec::new();
    for run in 0..RUNS {
        lists.push(timed(&mut agent, "session/list", json!({"cwd": cwd})).await?.0);
        let last_cursor = (STORED - 50).to_string();
        let (took, page) = timed(&mut agent, "session/list", json!({"cwd": cwd, "cursor": last_cursor})).await?;
        anyhow::ensure!(
            page["sessions"].as_array().map(Vec::len) == Some(50),
            "the last page holds 50 sessions: {page}"
        );
        last_pages.push(took);
        // A different session each time: nothing of it is in memory yet.
        let load = format!("sess_{:05}", 1000 + run);
        loads
            .push(timed(&mut agent, "session/load", json!({"sessionId": load, "cwd": cwd, "mcpServers": []})).await?.0);
        let resume = format!("sess_{:05}", 2000 + run);
        resumes.push(
            timed(&mut agent, "session/resume", json!({"sessionId": resume, "cwd": cwd, "mcpServers": []})).await?.0,
        );
    }
    agent.close_stdin();
    agent.wait_exit().await;
    Ok(vec![
        duration_row("sessions: first session/list of 10,000 stored (a page of 50)", &[first_list], ""),
        duration_row("sessions: session/list again, the first page", &lists, "< 100 ms"),
        duration_row("sessions: session/list, the last page", &last_pages, "< 100 ms"),
        duration_row("sessions: session/load of one (20 messages replayed)", &loads, "< 50 ms"),
        duration_row("sessions: session/resume of one", &resumes, "< 50 ms"),
    ])
}

/// A request's round trip and its result; an error answer fails the measurement.
async fn timed(agent: &mut Agent, method: &str, params: Value) -> anyhow::Result<(Duration, Value)> {
    let started = Instant::now();
    let id = agent.request(method, params).await;
    let (response, _) = agent.response(id).await;
    let took = started.elapsed();
    anyhow::ensure!(response["result"].is_object(), "{method}: {response}");
    Ok((took, response["result"].clone()))
}
