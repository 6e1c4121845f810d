#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Background subagent tasks over ACP with the real binary: a task that returns at once, runs on
//! past its turn, reports at the next prompt or in a turn of the agent's own, is stopped on
//! request, and shows as a child session to a client that asks for them.

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use larik_tests::tasks::{
    background, background_note_writer, calls, child, result_of, result_text, start, start_showing_children, task,
};
use serde_json::{Value, json};

/// What `/tasks` says.
async fn tasks_said(agent: &mut Agent, session: &str, command: &str) -> String {
    let (_, updates) = agent.prompt(session, command, |params| panic!("{params}")).await;
    larik_tests::harness::message_text(&updates)
}

#[tokio::test]
async fn a_background_task_returns_at_once_and_task_wait_gets_its_result() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![background("t1", "survey", "BG-WAIT: survey the project")]),
        child(
            "Started the background task",
            calls(vec![larik_core::replay::RecordedToolCall {
                id: Some("w1".into()),
                name: "task_wait".into(),
                input: json!({}),
            }]),
        ),
        // The child answers only after the parent moved on: it runs apart from the turn.
        child("BG-WAIT", Step { after_requests: Some(3), ..Step::text("The survey is done.") }),
        child("The survey is done.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "survey it", |params| panic!("{params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    let started = result_text(&result_of(&requests[1], "t1"));
    assert!(started.starts_with("Started the background task `bg-1` (explore: survey)"), "{started}");
    let waited = result_text(&result_of(requests.last().unwrap(), "w1"));
    assert!(
        waited.contains(
            "<task-notification id=\"bg-1\" task=\"explore: survey\" status=\"completed\">\nThe survey is done."
        ),
        "{waited}"
    );
    assert_eq!(tasks_said(&mut agent, &session, "/tasks").await, "No background tasks are running.");
}

#[tokio::test]
async fn a_background_task_outlives_a_cancelled_turn_reports_at_the_next_prompt_and_stops_on_request() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![
            background("t1", "slow survey", "BG-SLOW: survey slowly"),
            background("t2", "stuck", "BG-STUCK: never finish"),
        ]),
        // The parent's next answer hangs until the user cancels the turn.
        child("Started the background task `bg-2`", Step { hang: true, ..Step::text("Waiting on the survey") }),
        child("BG-STUCK", Step { hang: true, ..Step::text("") }),
        child("BG-SLOW", Step { after_requests: Some(4), ..Step::text("The slow survey is done.") }),
        // The next prompt's request carries the finished task's result.
        child("next question", Step::text("Noted.")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "survey it"}]}))
        .await;
    // Cancel once both children and the hanging parent request are in.
    while mock.requests().len() < 4 {
        let _ = tokio::time::timeout(std::time::Duration::from_millis(20), agent.next()).await;
    }
    agent.notify("session/cancel", json!({"sessionId": session})).await;
    let (cancelled, _) = agent.response(prompt).await;
    assert_eq!(cancelled["result"]["stopReason"], "cancelled");
    // The slow one finishes after the cancel; the stuck one still runs.
    let listed = loop {
        let listed = tasks_said(&mut agent, &session, "/tasks").await;
        if !listed.contains("bg-1") {
            break listed;
        }
    };
    assert!(listed.contains("- bg-2: explore: stuck (running)"), "the cancel stopped neither: {listed}");
    let (_, _) = agent.prompt(&session, "next question", |params| panic!("{params}")).await;
    let last = mock.requests().last().unwrap().to_string();
    assert!(last.contains("task-notification id=\\\"bg-1\\\"") && last.contains("The slow survey is done."), "{last}");
    assert!(tasks_said(&mut agent, &session, "/tasks stop bg-2").await.contains("Stopping the background task `bg-2`"));
    let after = loop {
        let listed = tasks_said(&mut agent, &session, "/tasks").await;
        if !listed.contains("bg-2") {
            break listed;
        }
    };
    assert_eq!(after, "No background tasks are running.");
}

#[tokio::test]
async fn a_client_that_opted_in_sees_a_turn_of_the_agents_own_when_a_task_finishes_while_idle() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![background("t1", "late survey", "BG-IDLE: survey it")]),
        child("Started the background task", Step::text("I started the survey.")),
        // The child answers only once the prompt's turn is over (its last request is in).
        child("BG-IDLE", Step { after_requests: Some(3), ..Step::text("The late survey found 3 modules.") }),
        child("Background task results arrived", Step::text("The survey is back: 3 modules.")),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"_meta": {"larik": {"backgroundTurns": true}}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, _) = agent.prompt(&session, "survey it later", |params| panic!("{params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    // No prompt is running now: the agent's own turn arrives as updates outside any.
    let mut said = String::new();
    while !said.contains("The survey is back") {
        let message = agent.next().await;
        assert_eq!(message["method"], "session/update", "only updates arrive: {message}");
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            said.push_str(message["params"]["update"]["content"]["text"].as_str().unwrap_or_default());
        }
    }
    assert_eq!(said, "The survey is back: 3 modules.");
    let last = mock.requests().last().unwrap().to_string();
    assert!(last.contains("The late survey found 3 modules."), "{last}");
}

#[tokio::test]
async fn a_client_with_child_sessions_sees_each_subagent_as_one_and_can_stop_it() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project_path().join("alpha.txt"), "alpha\n").unwrap();
    let steps = vec![
        calls(vec![
            task("t1", "explore", "find alpha", "ALPHA-S: read alpha.txt"),
            task("t2", "explore", "wait forever", "STUCK-S: wait"),
        ]),
        child("ALPHA-S", Step::tool("c1", "read", json!({"path": "alpha.txt"}))),
        child("ALPHA-S", Step::text("alpha done")),
        child("alpha done", Step::text("One found, one stopped.")),
        // Last: stopped early, the stuck child may never ask, and the parent's last request
        // (which names both tasks) must not take this answer.
        child("STUCK-S", Step { hang: true, ..Step::text("") }),
    ];
    let (mock, mut agent, session) = start_showing_children(&sandbox, steps).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "look around"}]}))
        .await;
    let mut children: Vec<(String, String)> = Vec::new();
    let mut child_updates: Vec<Value> = Vec::new();
    let mut idle: Vec<(String, String)> = Vec::new();
    let response = loop {
        let message = agent.next().await;
        if message["id"] == id && message.get("method").is_none() {
            break message;
        }
        let params = &message["params"];
        let update = &params["update"];
        if update["sessionUpdate"] == "subagent_update" {
            assert_eq!(params["sessionId"], session.as_str(), "announced in the parent's session");
            let child = update["sessionId"].as_str().unwrap().to_owned();
            if let Some(title) = update["title"].as_str() {
                assert_eq!(update["state"]["state"], "running", "{update}");
                assert_eq!(update["capabilities"]["cancel"], json!({}), "each can be stopped: {update}");
                let call = if title == "explore: wait forever" { "t2" } else { "t1" };
                assert_eq!(update["_meta"]["larik"]["toolCallId"], call, "the task call that made it: {update}");
                children.push((child.clone(), title.to_owned()));
                if title == "explore: wait forever" {
                    // The user stops this one child; the other and the parent go on.
                    agent.notify("session/cancel", json!({"sessionId": child})).await;
                }
            } else {
                idle.push((child, update["state"]["stopReason"].as_str().unwrap_or_default().to_owned()));
            }
        } else if params["sessionId"] != session.as_str() {
            child_updates.push(message.clone());
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(children.len(), 2, "{children:?}");
    let alpha = &children.iter().find(|(_, title)| title == "explore: find alpha").unwrap().0;
    let stuck = &children.iter().find(|(_, title)| title == "explore: wait forever").unwrap().0;
    let read = child_updates
        .iter()
        .find(|message| message["params"]["update"]["sessionUpdate"] == "tool_call")
        .unwrap_or_else(|| panic!("{child_updates:?}"));
    assert_eq!(read["params"]["sessionId"], alpha.as_str(), "the child's call comes in its own session");
    assert_eq!(read["params"]["update"]["title"], "Read alpha.txt", "unlabelled: the session says whose it is");
    assert!(
        idle.contains(&(alpha.clone(), "end_turn".into())) && idle.contains(&(stuck.clone(), "cancelled".into())),
        "{idle:?}"
    );
    let last = mock.requests().last().unwrap().clone();
    assert_eq!(result_text(&result_of(&last, "t1")), "alpha done");
    assert!(result_text(&result_of(&last, "t2")).contains("it was cancelled"), "{last}");
}

#[tokio::test]
async fn a_background_child_session_goes_on_after_the_turn_asks_in_its_own_name_and_ends_idle() {
    let sandbox = Sandbox::new();
    let steps = background_note_writer("BG-NOTES");
    let (_mock, mut agent, session) = start_showing_children(&sandbox, steps).await;
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "take notes"}]}))
        .await;
    let mut child_id: Option<String> = None;
    // The child's question stays unanswered until the turn is over.
    let mut question: Option<Value> = None;
    let mut turn_over = false;
    let mut after_turn: Vec<Value> = Vec::new();
    let idle = loop {
        let message = agent.next().await;
        if message["id"] == prompt && message.get("method").is_none() {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            turn_over = true;
        } else if message["method"] == "session/request_permission" {
            assert_eq!(
                message["params"]["sessionId"].as_str(),
                child_id.as_deref(),
                "asked in the child's session: {message}"
            );
            question = Some(message);
        } else {
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "subagent_update" && update.get("title").is_some() {
                assert_eq!(update["_meta"]["larik"]["toolCallId"], "t1", "{update}");
                child_id = Some(update["sessionId"].as_str().unwrap().to_owned());
            } else if update["sessionUpdate"] == "subagent_update" {
                break message;
            } else if turn_over {
                after_turn.push(message.clone());
            }
        }
        if turn_over && let Some(asked) = question.take() {
            agent.reply(&asked, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await;
        }
    };
    let child_id = child_id.expect("the background child was announced");
    assert_eq!(idle["params"]["sessionId"], session.as_str(), "its end is told in the parent's session");
    assert_eq!(idle["params"]["update"]["sessionId"], child_id.as_str());
    assert_eq!(idle["params"]["update"]["state"], json!({"state": "idle", "stopReason": "end_turn"}));
    let finished = after_turn
        .iter()
        .find(|message| message["params"]["update"]["status"] == "completed")
        .unwrap_or_else(|| panic!("{after_turn:?}"));
    assert_eq!(
        finished["params"]["sessionId"],
        child_id.as_str(),
        "the child's write finished after the turn, in its session"
    );
    assert_eq!(std::fs::read_to_string(sandbox.project_path().join("notes.txt")).unwrap(), "noted\n");
}

/// A background child's question still open when its task is stopped: nothing else would close
/// it, so the agent withdraws it with `$/cancel_request`, and the call it asked about never runs.
#[tokio::test]
async fn stopping_a_background_task_withdraws_its_open_question() {
    let sandbox = Sandbox::new();
    let steps = background_note_writer("BG-ASKS");
    let (_mock, mut agent, session) = start_showing_children(&sandbox, steps).await;
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "take notes"}]}))
        .await;
    let (mut question, mut turn_over) = (None, false);
    while question.is_none() || !turn_over {
        let message = agent.next().await;
        if message["id"] == prompt && message.get("method").is_none() {
            turn_over = true;
        } else if message["method"] == "session/request_permission" {
            question = Some(message);
        }
    }
    let question = question.unwrap();
    let stop = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "/tasks stop bg-1"}]}),
        )
        .await;
    let (mut withdrawn, mut stopped) = (None, false);
    while withdrawn.is_none() || !stopped {
        let message = agent.next().await;
        if message["method"] == "$/cancel_request" {
            withdrawn = Some(message);
        } else if message["id"] == stop && message.get("method").is_none() {
            stopped = true;
        }
    }
    let withdrawn = withdrawn.unwrap();
    assert_eq!(withdrawn["params"]["requestId"], question["id"], "{withdrawn}");
    assert!(!sandbox.project_path().join("notes.txt").exists(), "the write never ran");
}
