//! Hooks: user-written commands and model prompts that run at points of a session, in Claude
//! Code's format so that existing `.claude/settings.json` hooks work unchanged.
//!
//! This module owns reading hook definitions from settings files ([`Hooks::load`]), choosing
//! the handlers an event runs ([`Hooks::matching`]), running them in parallel ([`run_hooks`])
//! and combining what they said into one [`HookOutcome`]. It does not build payloads, decide
//! permissions or touch the conversation: the turn loop does that with the outcome.
//!
//! Invariants:
//! - A settings file that cannot be read as hooks is an error naming the file, never skipped, so
//!   a hook that denies something is never silently dropped. Parts Larik does not run (unknown
//!   events, `http`/`mcp_tool`/`agent` handlers) are left out and reported in
//!   [`Hooks::problems`].
//! - A hook never ends the turn by failing: timeouts, crashes, unreadable output and evaluator
//!   errors fail open with a message for the user. Only what a hook deliberately says (exit 2,
//!   `decision: "block"`, `continue: false`, a permission decision) changes what happens.
//! - Every command hook runs in its own process group; on timeout or cancel the whole group is
//!   killed, so nothing a hook started outlives it.
//! - Combined verdicts do not depend on which hook finished first: results are folded in the
//!   order of the handlers.
//!
//! Files: `definition` (the settings format and [`Hooks`]), `matcher` (Claude Code's matcher
//! rules), `command` (running a command hook), `prompt` (prompt hooks), `reply` (what one
//! handler said), `outcome` (combining replies). Claude Code's names for Larik's tools, which
//! payloads use, are in [`crate::claude_code`].

mod command;
mod definition;
mod matcher;
mod outcome;
mod prompt;
mod reply;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use definition::Hooks;

use crate::permission::HookVerdict;

/// Claude Code's default for command hooks is 600 s; Larik's is shorter because a hook holds up
/// the turn, and a hook that needs longer says so in its `timeout`.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// Claude Code's default for prompt hooks.
pub const DEFAULT_PROMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// Claude Code caps `additionalContext` and other hook text at 10,000 characters.
pub const MAX_TEXT_CHARS: usize = 10_000;

/// The points of a session where hooks run. Names are Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    Notification,
    Stop,
    SubagentStop,
    PreCompact,
    SessionEnd,
}

impl HookEvent {
    pub const ALL: [HookEvent; 11] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    /// The name used in settings files and in the payload's `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Notification => "Notification",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event with this exact name (Claude Code's names are case-sensitive).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Claude Code ignores the matcher of these events: every handler runs.
    pub(crate) fn ignores_matcher(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }

    /// Whether exit 2 or `decision: "block"` changes what happens next. On the other events
    /// Claude Code shows a block's reason to the user only, and so does Larik.
    pub(crate) fn can_block(self) -> bool {
        matches!(
            self,
            HookEvent::UserPromptSubmit
                | HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::Stop
                | HookEvent::SubagentStop
                | HookEvent::PreCompact
        )
    }

    /// Whether a block's reason is also feedback for the model: the tool already ran, or the
    /// model is made to keep going, so the model needs to read why.
    pub(crate) fn block_is_feedback(self) -> bool {
        matches!(
            self,
            HookEvent::PostToolUse | HookEvent::PostToolUseFailure | HookEvent::Stop | HookEvent::SubagentStop
        )
    }

    /// Whether plain (non-JSON) stdout of a successful hook is context for the model.
    pub(crate) fn plain_stdout_is_context(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    }
}

/// Where a hook definition came from. Project hooks arrive with a cloned repository, so they
/// run only once the user has approved them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    User,
    Project,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HandlerKind {
    /// Run with `bash -c`.
    Command { command: String },
    /// Sent to a model; `$ARGUMENTS` is replaced with the payload JSON.
    Prompt { prompt: String, model: Option<String> },
}

/// One handler as defined in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookHandler {
    pub event: HookEvent,
    /// As written; `None` when omitted.
    pub matcher: Option<String>,
    pub kind: HandlerKind,
    pub timeout: Duration,
    pub scope: Scope,
    /// The settings file it was read from.
    pub source: PathBuf,
    /// The plugin that brought it: its command runs with `CLAUDE_PLUGIN_ROOT` and
    /// `CLAUDE_PLUGIN_DATA` set (and already substituted in the command's text).
    pub plugin: Option<crate::config::plugins::PluginDirs>,
}

impl HookHandler {
    /// How the handler is named in messages and in `HookText::source`: the command, or
    /// "prompt hook".
    pub fn label(&self) -> &str {
        match &self.kind {
            HandlerKind::Command { command } => command,
            HandlerKind::Prompt { .. } => "prompt hook",
        }
    }

    /// Whether two handlers run the same thing: Claude Code runs such duplicates once.
    pub(crate) fn same_action(&self, other: &HookHandler) -> bool {
        self.kind == other.kind && self.timeout == other.timeout
    }
}

/// What running hooks needs from the session.
pub struct HookRunEnv<'a> {
    /// The working directory of command hooks, and `LARIK_PROJECT_DIR` / `CLAUDE_PROJECT_DIR`.
    pub project_dir: &'a Path,
    /// Cancelling it kills every running command hook's process group.
    pub cancel: &'a tokio_util::sync::CancellationToken,
    /// Answers prompt hooks; without one they fail open.
    pub evaluator: Option<&'a dyn PromptEvaluator>,
}

/// The model behind prompt hooks. The hooks module has no model code of its own.
#[async_trait::async_trait]
pub trait PromptEvaluator: Send + Sync {
    /// Sends one prompt to a model (the hook's `model` if given) and returns its text reply;
    /// the implementor adds the spend to the session's usage.
    async fn evaluate(&self, model: Option<&str>, prompt: &str) -> Result<String, crate::llm::ProviderError>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PermissionDecision {
    // Declared in rising precedence so that `max` picks the combined decision.
    Allow,
    Ask,
    Deny,
}

/// A hook's verdict on a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPermission {
    pub decision: PermissionDecision,
    pub reason: Option<String>,
}

impl HookPermission {
    /// The verdict in the form `Permissions::decide` takes.
    pub fn verdict(&self) -> HookVerdict {
        match self.decision {
            PermissionDecision::Allow => HookVerdict::Allow,
            PermissionDecision::Ask => HookVerdict::Ask,
            PermissionDecision::Deny => {
                HookVerdict::Deny { reason: self.reason.clone().unwrap_or_else(|| "no reason given".into()) }
            }
        }
    }
}

/// Text a hook adds to the conversation, with where it came from, so the caller can tag it
/// (`<hook-context source="...">`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookText {
    /// The command, or "prompt hook".
    pub source: String,
    pub text: String,
}

/// What all the hooks of one event said, combined.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct HookOutcome {
    /// Some hook said `continue: false`: the turn stops. Its `stopReason`, for the user.
    pub stop: Option<String>,
    /// Exit 2 (stderr), `decision: "block"` (its reason), a prompt hook's `ok: false`; several
    /// joined by newlines. Only on events that can block (see `HookEvent`); for PreToolUse
    /// it is also in `permission` as a deny.
    pub block: Option<String>,
    /// PreToolUse's `permissionDecision` (and PermissionRequest's `decision.behavior`),
    /// combined deny > ask > allow.
    pub permission: Option<HookPermission>,
    /// `hookSpecificOutput.updatedInput`, still in Claude Code's field names.
    pub updated_input: Option<serde_json::Value>,
    /// For the model: `additionalContext`, and plain stdout on UserPromptSubmit and SessionStart.
    pub context: Vec<HookText>,
    /// For the model as hook feedback: block reasons on PostToolUse, PostToolUseFailure, Stop
    /// and SubagentStop.
    pub feedback: Vec<HookText>,
    /// For the user: `systemMessage`, non-blocking errors, timeouts, unreadable replies.
    pub messages: Vec<String>,
}

/// Runs the handlers in parallel and combines their results. `payload` is the complete stdin
/// JSON (the caller builds it); its `hook_event_name` says how output is read, falling back to
/// each handler's own event.
pub async fn run_hooks(handlers: &[HookHandler], payload: &serde_json::Value, env: &HookRunEnv<'_>) -> HookOutcome {
    if handlers.is_empty() {
        return HookOutcome::default();
    }
    let payload_event =
        payload.get("hook_event_name").and_then(serde_json::Value::as_str).and_then(HookEvent::from_name);
    let payload_text = payload.to_string();
    // Joined in this task rather than spawned: the handlers only wait on processes and the
    // model, and they end with this call, so none can outlive the turn.
    let runs = handlers.iter().map(|handler| {
        let event = payload_event.unwrap_or(handler.event);
        let payload_text = payload_text.as_str();
        async move {
            let reply = match &handler.kind {
                HandlerKind::Command { command } => {
                    command::run(command, handler, payload_text, env).await.reply(event, command)
                }
                HandlerKind::Prompt { prompt, model } => {
                    prompt::run(prompt, model.as_deref(), handler.timeout, payload_text, env).await.reply(event)
                }
            };
            (event, reply)
        }
    });
    let replies = futures::future::join_all(runs).await;
    outcome::combine(replies)
}

#[cfg(test)]
mod tests;
