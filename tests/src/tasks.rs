//! Scripted subagent tasks for the mock model, and what a request says of them.

use serde_json::{Value, json};

use crate::harness::{Agent, Sandbox};
use crate::mock_llm::{MockLlm, Scenario, Step};

/// Makes `root` a git repository on `main` with one commit holding `app.py`, for worktree tasks.
pub fn one_commit_repository(root: &std::path::Path) {
    crate::harness::git(root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("app.py"), "print('hi')\n").unwrap_or_else(|error| panic!("app.py: {error}"));
    crate::harness::git(root, &["add", "-A"]);
    crate::harness::git(root, &["commit", "-qm", "first"]);
}

/// A `task` call.
pub fn task(id: &str, kind: &str, description: &str, prompt: &str) -> larik_core::replay::RecordedToolCall {
    larik_core::replay::RecordedToolCall {
        id: Some(id.into()),
        name: "task".into(),
        input: json!({"subagent_type": kind, "description": description, "prompt": prompt}),
    }
}

/// A model response that only calls tools.
pub fn calls(calls: Vec<larik_core::replay::RecordedToolCall>) -> Step {
    let mut step = Step::default();
    step.response.tool_calls = calls;
    step
}

/// A step of the child whose prompt contains `marker`.
pub fn child(marker: &str, step: Step) -> Step {
    Step { when: Some(marker.into()), ..step }
}

/// The mock model with `steps`, and the agent in the sandbox's project with a session open.
pub async fn start(sandbox: &Sandbox, steps: Vec<Step>) -> (MockLlm, Agent, String) {
    start_with_model(sandbox, steps, "claude-mock").await
}

/// The same, the session's model named `model` (the mock answers for any).
pub async fn start_with_model(sandbox: &Sandbox, steps: Vec<Step>, model: &str) -> (MockLlm, Agent, String) {
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let env: Vec<(String, String)> = sandbox
        .env(mock.url())
        .into_iter()
        .map(|(key, value)| if key == "LARIK_MODEL" { (key, model.to_owned()) } else { (key, value) })
        .collect();
    let mut agent = Agent::spawn(&sandbox.project_path(), &env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (mock, agent, session)
}

/// The same for a client that shows subagents as child sessions (`subagent_update`), so each
/// child's events go out through a forwarder of its own.
pub async fn start_showing_children(sandbox: &Sandbox, steps: Vec<Step>) -> (MockLlm, Agent, String) {
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"subagents": {}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (mock, agent, session)
}

/// A general-purpose task started in the background whose child (its prompt holds `marker`)
/// writes `notes.txt`, asking first, then reports "notes written".
pub fn background_note_writer(marker: &str) -> Vec<Step> {
    let mut call = task("t1", "general-purpose", "write notes", &format!("{marker}: write notes.txt"));
    call.input["run_in_background"] = json!(true);
    vec![
        calls(vec![call]),
        child("Started the background task", Step::text("It runs in the background.")),
        child(marker, Step::tool("c1", "write", json!({"path": "notes.txt", "content": "noted\n"}))),
        child(marker, Step::text("notes written")),
    ]
}

pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

pub fn result_of(request: &Value, id: &str) -> Value {
    let messages = request["messages"].as_array().unwrap();
    messages
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|part| part["type"] == "tool_result" && part["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {request}"))
}

pub fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        content => content.as_array().unwrap().iter().filter_map(|part| part["text"].as_str()).collect(),
    }
}

/// A task that runs in the background.
pub fn background(id: &str, description: &str, prompt: &str) -> larik_core::replay::RecordedToolCall {
    let mut call = task(id, "explore", description, prompt);
    call.input["run_in_background"] = json!(true);
    call
}
