//! A session: one conversation in one project. It takes prompts, runs turns and emits
//! [`AgentEvent`]s; it is cancelled through a tree of tokens (session -> turn -> tool call).
//! One turn runs at a time per session; a second prompt waits for the first to finish.

mod dispatch;
mod turn;

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::event::AgentEvent;
use crate::llm::{Message, Part, Provider, ProviderError};
use crate::permission::Permissions;
use crate::tools::Registry;
use crate::workspace::Workspace;

/// Why a turn ended normally. Cancellation is an outcome, not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
}

/// A turn that could not finish; named for what the front end does next.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The model call failed for good (after retries where retrying made sense).
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// How a session talks to its model.
#[derive(Clone)]
pub struct ModelSettings {
    pub model: String,
    pub max_tokens: u32,
    pub max_turn_requests: u32,
}

pub struct Session {
    workspace: Arc<Workspace>,
    provider: Result<Arc<dyn Provider>, ProviderError>,
    model: ModelSettings,
    registry: Registry,
    permissions: Permissions,
    system: String,
    history: tokio::sync::Mutex<Vec<Message>>,
    cancel: CancellationToken,
    current_turn: Mutex<Option<CancellationToken>>,
}

impl Session {
    /// `provider` may be an error (e.g. a missing key): the session still opens, and each prompt
    /// reports that error so the editor can show how to fix it.
    pub fn new(
        cwd: &Path,
        provider: Result<Arc<dyn Provider>, ProviderError>,
        model: ModelSettings,
        parent_cancel: &CancellationToken,
    ) -> Self {
        let workspace = Arc::new(Workspace::new(cwd));
        let system = crate::prompt::system_prompt(workspace.root(), &crate::prompt::today_utc());
        Self {
            workspace,
            provider,
            model,
            registry: Registry::builtin(),
            permissions: Permissions::default(),
            system,
            history: tokio::sync::Mutex::new(Vec::new()),
            cancel: parent_cancel.child_token(),
            current_turn: Mutex::new(None),
        }
    }

    pub fn cwd(&self) -> &Path {
        self.workspace.root()
    }

    pub fn permissions(&self) -> &Permissions {
        &self.permissions
    }

    /// Runs one turn for `prompt`, sending events as they happen. `cancel` belongs to the caller's
    /// tree (e.g. the request that asked for the turn); the session's own shutdown cancels it too.
    /// Returns when the turn is over; every event of the turn has been handed to `events` by then.
    pub async fn prompt(
        &self,
        prompt: Vec<Part>,
        events: mpsc::Sender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<StopReason, TurnError> {
        let mut history = self.history.lock().await;
        if let Ok(mut current) = self.current_turn.lock() {
            *current = Some(cancel.clone());
        }
        // Closing the session cancels its running turn.
        let link = tokio::spawn({
            let session = self.cancel.clone();
            let turn = cancel.clone();
            async move {
                session.cancelled().await;
                turn.cancel();
            }
        });
        let outcome = match self.provider.clone() {
            Ok(provider) => {
                let turn = turn::Turn {
                    provider: provider.as_ref(),
                    model: &self.model,
                    system: &self.system,
                    registry: &self.registry,
                    permissions: &self.permissions,
                    workspace: &self.workspace,
                    events: &events,
                    cancel: &cancel,
                };
                turn.run(&mut history, prompt).await
            }
            Err(error) => Err(error.into()),
        };
        link.abort();
        if let Ok(mut current) = self.current_turn.lock() {
            *current = None;
        }
        outcome
    }

    /// Cancels the running turn, if any: the model stream stops, running tools are killed and
    /// pending permission prompts resolve as cancelled.
    pub fn cancel_turn(&self) {
        if let Ok(current) = self.current_turn.lock()
            && let Some(token) = current.as_ref()
        {
            token.cancel();
        }
    }

    /// Cancels everything the session runs; used when the session closes.
    pub fn shutdown(&self) {
        self.cancel.cancel();
    }
}
