//! One subagent's run: a fresh conversation of one prompt in a child environment, through the
//! same turn loop as the session's own turns (the same dispatch, hooks with SubagentStop,
//! permissions), with the loop guard watching it. What comes back is its last words.

use std::path::Path;
use std::sync::{Arc, Weak};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::environment::SessionEnv;
use super::store::{SessionLog, SessionStore};
use super::turn::{LoopGuard, Turn};
use crate::agents::{ChildError, ChildRun, SubagentOutcome, SubagentRunner};
use crate::event::AgentEvent;
use crate::llm::{Message, Part, Role};

/// Runs a session's children: derives each one's environment from the session's (held weakly:
/// the `task` tool that holds this runner lives in the session's own registry).
pub struct SessionRunner {
    pub parent: Weak<SessionEnv>,
}

#[async_trait::async_trait]
impl SubagentRunner for SessionRunner {
    async fn run(
        &self,
        child: ChildRun,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Result<SubagentOutcome, ChildError> {
        let parent = self.parent.upgrade().ok_or(ChildError::SessionEnded)?;
        let definition = &child.definition;
        // A worktree is another directory: the session's language servers (and checkpoints,
        // see `SessionEnv::child`) are not about its files.
        let in_worktree = child.cwd != parent.tools.workspace.root();
        let keep = |names: crate::tools::ToolNames<'_>| {
            definition.allows(names) && !(in_worktree && crate::agents::NOT_IN_A_WORKTREE.contains(&names.name))
        };
        let mut env = parent.child(child.id.clone(), &child.cwd, keep, child.worktree_sandbox, cancel.clone());
        // The child's conversation is kept beside the parent's, readable and loadable like it.
        env.log = parent.log.as_ref().and_then(|log| transcript(log.path(), &child.id, parent.tools.workspace.root()));
        let provider = child.provider?;
        let guard = std::sync::Mutex::new(LoopGuard::default());
        let steering = std::sync::Mutex::new(Vec::new());
        let env = Arc::new(env);
        let turn = Turn {
            env: &env,
            provider: provider.as_ref(),
            model: &child.model,
            system: &child.system,
            events,
            cancel,
            steering: &steering,
            child: Some(&guard),
        };
        let mut history = Vec::new();
        let stop = match turn.run(&mut history, vec![Part::Text { text: child.prompt }], None).await {
            Ok(stop) => stop,
            Err(super::TurnError::Provider(error)) => return Err(ChildError::Provider(error)),
        };
        let looped = guard.lock().is_ok_and(|guard| guard.tripped);
        let requests = history.iter().filter(|message| message.role == Role::Assistant).count();
        Ok(SubagentOutcome { stop, looped, last_text: last_text(&history), requests, spent: env.usage.spent() })
    }
}

/// The child's session file: `<sessions>/<parent>-agents/<child>.jsonl`.
fn transcript(parent_log: &Path, child_id: &str, cwd: &Path) -> Option<Arc<SessionLog>> {
    let stem = parent_log.file_stem()?.to_str()?;
    let dir = parent_log.parent()?.join(format!("{stem}-agents"));
    match SessionStore::new(dir).create(child_id, cwd) {
        Ok(log) => Some(Arc::new(log)),
        Err(error) => {
            tracing::warn!(%error, "the subagent's transcript could not be saved");
            None
        }
    }
}

fn last_text(history: &[Message]) -> Option<String> {
    history.iter().rev().filter(|message| message.role == Role::Assistant).find_map(|message| {
        let text: Vec<&str> = message
            .content
            .iter()
            .filter_map(|part| match part {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let text = text.join("").trim().to_owned();
        (!text.is_empty()).then_some(text)
    })
}
