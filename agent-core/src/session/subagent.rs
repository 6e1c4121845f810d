//! One subagent's run: a fresh conversation of one prompt in a child environment, through the
//! same turn loop as the session's own turns (the same dispatch, hooks with SubagentStop,
//! permissions), with the loop guard watching it. What comes back is its last words.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::turn::{LoopGuard, Turn};
use super::{ModelSettings, StopReason, TurnError};
use crate::environment::SessionEnv;
use crate::event::AgentEvent;
use crate::llm::{Message, Part, Provider, ProviderError, Role};

/// How a subagent's run ended.
pub struct SubagentOutcome {
    pub stop: StopReason,
    /// The loop guard stopped it: the same calls with the same results, again and again.
    pub looped: bool,
    /// Its last message's text, if it said anything.
    pub last_text: Option<String>,
    /// Model requests it made.
    pub requests: usize,
}

/// Runs `prompt` in `env` on `provider` with `system` as the system prompt; the child's events
/// go to `events`.
pub async fn run_subagent(
    env: &Arc<SessionEnv>,
    provider: Result<Arc<dyn Provider>, ProviderError>,
    system: &str,
    model: &ModelSettings,
    prompt: String,
    events: &mpsc::Sender<AgentEvent>,
    cancel: &CancellationToken,
) -> Result<SubagentOutcome, TurnError> {
    let provider = provider?;
    let guard = std::sync::Mutex::new(LoopGuard::default());
    let steering = std::sync::Mutex::new(Vec::new());
    let turn = Turn {
        env,
        provider: provider.as_ref(),
        model,
        system,
        events,
        cancel,
        steering: &steering,
        child: Some(&guard),
    };
    let mut history = Vec::new();
    let stop = turn.run(&mut history, vec![Part::Text { text: prompt }], None).await?;
    let looped = guard.lock().is_ok_and(|guard| guard.tripped);
    let requests = history.iter().filter(|message| message.role == Role::Assistant).count();
    Ok(SubagentOutcome { stop, looped, last_text: last_text(&history), requests })
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
