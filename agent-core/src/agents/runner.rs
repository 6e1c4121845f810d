//! The door from a `task` call to the turn loop. The agents decide what a child is (its
//! definition, model, prompt, working directory); running it is the session's, through
//! [`SubagentRunner`], which the session implements and hands to the `task` tool. So nothing
//! here reaches the loop, the permissions or the session file.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Definition;
use crate::event::{AgentEvent, StopReason};
use crate::llm::{Provider, ProviderError};
use crate::models::ModelSettings;
use crate::sandbox::Sandbox;

/// One child to run.
pub struct ChildRun {
    /// Its session id (its parent's, then the call's).
    pub id: String,
    /// Where it works: the parent's directory or its own worktree.
    pub cwd: PathBuf,
    /// The sandbox for a worktree (its writes reach the repository's shared git directory);
    /// `None` to derive the child's from the parent's for `cwd`.
    pub worktree_sandbox: Option<Arc<Sandbox>>,
    /// Which of the parent's tools it has.
    pub definition: Definition,
    pub provider: Result<Arc<dyn Provider>, ProviderError>,
    pub model: ModelSettings,
    pub system: String,
    pub prompt: String,
}

/// How a subagent's run ended.
pub struct SubagentOutcome {
    pub stop: StopReason,
    /// The loop guard stopped it: the same calls with the same results, again and again.
    pub looped: bool,
    /// Its last message's text, if it said anything.
    pub last_text: Option<String>,
    /// Model requests it made.
    pub requests: usize,
    /// What its requests (and its prompt hooks) cost; counted in the session's totals too.
    pub spent: crate::spending::Spent,
}

/// Why a child could not run to an outcome.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// Its model could not be reached, for good.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The session that started it has ended.
    #[error("the session that started it has ended")]
    SessionEnded,
}

/// Runs children through the turn loop: the session implements it.
#[async_trait::async_trait]
pub trait SubagentRunner: Send + Sync {
    /// Runs `child` to its end under `cancel`; its events go to `events`.
    async fn run(
        &self,
        child: ChildRun,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Result<SubagentOutcome, ChildError>;
}
