#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Load: one `larik acp` process, 50 sessions prompting at once against the mock model, each
//! turn with a tool call: every prompt completes, and every update carries the session it
//! belongs to (no cross-talk between sessions).

use std::collections::HashMap;

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

const SESSIONS: usize = 50;

#[tokio::test]
async fn fifty_sessions_prompting_at_once_all_finish_without_cross_talk() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("notes.txt"), "shared notes\n").unwrap();
    // Each session's turn: its own tool call, then its own answer, told apart by markers.
    let mut steps = Vec::new();
    for n in 0..SESSIONS {
        steps.push(Step { when: Some(format!("[task-{n:02}]")), ..Step::text(&format!("answer for task-{n:02}")) });
    }
    // The first request of each turn carries only the prompt; the answer step above needs the
    // tool result, which names the call.
    let mut calls = Vec::new();
    for n in 0..SESSIONS {
        calls.push(Step {
            when: Some(format!("<task-{n:02}>")),
            ..Step::tool(&format!("toolu_{n:02}"), "read", json!({"path": "notes.txt"}))
        });
    }
    // Answers are only taken once their call's result is in the request ("toolu_NN" marks it).
    let steps: Vec<Step> = steps
        .into_iter()
        .enumerate()
        .map(|(n, step)| Step { when: Some(format!("toolu_{n:02}\"")), ..step })
        .chain(calls)
        .collect();
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(agent.new_session(&sandbox.project_path()).await);
    }
    let mut prompts: HashMap<i64, usize> = HashMap::new();
    for (n, session) in sessions.iter().enumerate() {
        let id = agent
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("Do <task-{n:02}> now")}]}),
            )
            .await;
        prompts.insert(id, n);
    }
    let index: HashMap<&str, usize> = sessions.iter().enumerate().map(|(n, session)| (session.as_str(), n)).collect();
    let mut texts: Vec<String> = vec![String::new(); SESSIONS];
    let mut finished = 0;
    while finished < SESSIONS {
        let message: Value = agent.next().await;
        if let Some(n) =
            message["id"].as_i64().and_then(|id| prompts.get(&id)).filter(|_| message.get("method").is_none())
        {
            assert_eq!(message["result"]["stopReason"], "end_turn", "session {n}: {message}");
            finished += 1;
            continue;
        }
        match message["method"].as_str() {
            Some("session/update") => {
                let session = message["params"]["sessionId"].as_str().unwrap();
                let n = *index.get(session).unwrap_or_else(|| panic!("an update for no session of ours: {message}"));
                let update = &message["params"]["update"];
                if let Some(call) = update["toolCallId"].as_str() {
                    assert_eq!(call, format!("toolu_{n:02}"), "session {n} got another's call: {message}");
                }
                if update["sessionUpdate"] == "agent_message_chunk" {
                    texts[n].push_str(update["content"]["text"].as_str().unwrap_or(""));
                }
            }
            Some("session/request_permission") => panic!("reads never ask: {message}"),
            _ => {}
        }
    }
    for (n, text) in texts.iter().enumerate() {
        assert_eq!(text, &format!("answer for task-{n:02}"), "session {n}");
    }
    assert_eq!(mock.requests().len(), 2 * SESSIONS);
}
