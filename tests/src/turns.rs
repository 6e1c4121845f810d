//! One whole prompt against the real binary, every permission request rejected: what a test of
//! settings and policy wants to see of a turn.

use serde_json::Value;

use crate::harness::{Agent, Sandbox};
use crate::mock_llm::{MockLlm, Scenario, Step};

/// What one rejected turn showed.
pub struct RejectedTurn {
    /// The `session/request_permission` params, in order (each was rejected).
    pub asked: Vec<Value>,
    /// The `session/update` params of the prompt.
    pub updates: Vec<Value>,
    /// The model's requests.
    pub requests: Vec<Value>,
}

/// Starts `larik acp` in the sandbox's project with its environment and `extra_env`, opens a
/// session and runs one prompt whose turn is `steps`; the agent exits after.
pub async fn rejected_turn(sandbox: &Sandbox, extra_env: &[(String, String)], steps: Vec<Step>) -> RejectedTurn {
    let mock = MockLlm::start(Scenario { responses: steps }).await.expect("mock model");
    let mut env = sandbox.env(mock.url());
    env.extend(extra_env.iter().cloned());
    let mut agent = Agent::spawn(&sandbox.project_path(), &env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, asked, updates) = agent.prompt_rejecting(&session, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    agent.close_stdin();
    agent.wait_exit().await;
    RejectedTurn { asked, updates, requests: mock.requests() }
}
