//! Load: fifty sessions of one agent prompting at once, each turn a tool call and an answer:
//! the spread of turn latencies and the agent's peak memory.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

use crate::process::memory_kib;
use crate::stats::{Row, millis};

const SESSIONS: usize = 50;

pub async fn fifty_sessions() -> anyhow::Result<Vec<Row>> {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("notes.txt"), "shared notes\n")?;
    // An answer is taken only once its call's result is in the request; a call by its prompt.
    let answers = (0..SESSIONS).map(|n| Step { when: Some(format!("toolu_{n:02}\"")), ..Step::text("Done.") });
    let calls = (0..SESSIONS).map(|n| Step {
        when: Some(format!("<task-{n:02}>")),
        ..Step::tool(&format!("toolu_{n:02}"), "read", json!({"path": "notes.txt"}))
    });
    let mock = MockLlm::start(Scenario { responses: answers.chain(calls).collect() }).await?;
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(agent.new_session(&sandbox.project_path()).await);
    }
    let pid = agent.child.id().unwrap_or(0);
    let mut sent: HashMap<i64, Instant> = HashMap::new();
    for (n, session) in sessions.iter().enumerate() {
        let id = agent
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("Do <task-{n:02}> now")}]}),
            )
            .await;
        sent.insert(id, Instant::now());
    }
    let mut latencies: Vec<Duration> = Vec::new();
    while latencies.len() < SESSIONS {
        let message = agent.next().await;
        if message.get("method").is_none()
            && let Some(started) = message["id"].as_i64().and_then(|id| sent.get(&id))
        {
            latencies.push(started.elapsed());
        }
    }
    let peak = memory_kib(pid).1 as f64 / 1024.0;
    agent.close_stdin();
    agent.wait_exit().await;
    latencies.sort();
    let at = |share: f64| latencies[((latencies.len() as f64 * share).ceil() as usize).clamp(1, latencies.len()) - 1];
    Ok(vec![
        Row::single(
            "load: 50 sessions at once, turn latency p50 / p99",
            format!("{} / {}", millis(at(0.5)), millis(at(0.99))),
            "(each a tool call and an answer)",
        ),
        Row::single("load: 50 sessions at once, agent peak RSS", format!("{peak:.1} MiB"), ""),
    ])
}
