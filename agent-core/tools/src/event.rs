//! What a session tells its front end while a turn runs. Front ends (ACP, LSP, headless) translate
//! these into their own wire formats; the core never knows which one is listening.

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::llm::Usage;

/// What kind of work a tool call does, so a front end can pick an icon. Stored in session
/// files by its lowercase name; a name this version does not know reads as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

/// A file (and optionally a 1-based line) a tool call touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: Option<u32>,
}

/// A richer rendering of a tool call for the editor.
#[derive(Debug, Clone, PartialEq)]
pub enum Display {
    /// A whole-file change: `old_text` is `None` for a new file.
    Diff { path: PathBuf, old_text: Option<String>, new_text: String },
    /// A shell command and what it printed; `terminal` names the editor terminal it ran in;
    /// `changes` the project's files it created, changed or deleted that the project keeps;
    /// `ignored` those it ignores (bytecode, build output), counted by directory.
    Command {
        command: String,
        output: String,
        exit_code: Option<i32>,
        terminal: Option<String>,
        changes: Vec<crate::checkpoints::FileChange>,
        ignored: Option<crate::checkpoints::IgnoredChanges>,
    },
    /// Plain text, e.g. what a read returned.
    Text(String),
    /// What the tool returned, then a line for the user alone under it (what a subagent spent):
    /// shown apart, so a front end that already shows `text` elsewhere still shows the note.
    Annotated { text: String, note: String },
    /// Text and images a tool returned (an MCP server's screenshot): `(media type, base64)`.
    Media { text: String, images: Vec<(String, String)> },
    /// The model's task list, replacing any earlier one.
    Plan(Vec<PlanEntry>),
}

impl Display {
    /// A command and what it printed, before the snapshots around it say what it changed.
    pub fn command(command: String, output: String, exit_code: Option<i32>, terminal: Option<String>) -> Self {
        Self::Command { command, output, exit_code, terminal, changes: Vec::new(), ignored: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    pub content: String,
    pub status: PlanStatus,
    pub priority: PlanPriority,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    High,
    Medium,
    Low,
}

/// A tool call as first announced, before it is authorized.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallView {
    pub id: String,
    pub name: String,
    pub title: String,
    pub kind: ToolKind,
    pub input: Value,
    pub locations: Vec<Location>,
    /// The call streams output while it runs ([`AgentEvent::ToolOutput`]), e.g. a command.
    pub streams_output: bool,
    /// A call whose whole effect is what it reports (the plan): front ends show the report
    /// (`Display::Plan`) rather than the call.
    pub report_only: bool,
}

/// The user's answer to a permission prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    AllowOnce,
    AllowAlways,
    /// Allow, but apply only these hunks (see [`larik_host::review`]) of the previewed change.
    AllowHunks(Vec<usize>),
    Reject {
        feedback: Option<String>,
    },
    /// The prompt was dismissed or the turn was cancelled.
    Cancelled,
}

/// A question the turn is waiting on. Answer through `reply`; dropping it counts as cancelled.
#[derive(Debug)]
pub struct PermissionRequest {
    pub tool_call: ToolCallView,
    /// Why the call needs asking, in words for the user.
    pub reason: String,
    /// What the call would change, e.g. the diff of an edit.
    pub preview: Option<Display>,
    /// The rule "always allow" would add, e.g. `bash(git commit*)`.
    pub suggested_rule: String,
    pub reply: oneshot::Sender<PermissionAnswer>,
}

/// Where a compaction is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactionState {
    Started,
    /// The summary the conversation now continues from.
    Completed {
        summary: String,
    },
    Failed {
        error: String,
    },
    Cancelled,
}

#[derive(Debug)]
pub enum AgentEvent {
    /// Streamed answer text, paced: a fast stream's deltas arrive merged, a few per frame.
    TextDelta(String),
    ThinkingDelta(String),
    ToolCallStarted(ToolCallView),
    ToolCallUpdated {
        id: String,
        status: ToolStatus,
        /// Model-facing output (already truncated), when the call has finished.
        output: Option<String>,
        display: Option<Display>,
        locations: Option<Vec<Location>>,
    },
    /// What a running call printed since the last piece, in order.
    ToolOutput {
        id: String,
        text: String,
    },
    /// How far a long call has come (an MCP server's progress), in words.
    ToolProgressNote {
        id: String,
        text: String,
    },
    /// A running call is shown in this editor terminal.
    ToolTerminal {
        id: String,
        terminal_id: String,
    },
    /// Boxed: the largest event, and rare; every streamed delta would otherwise move its size.
    PermissionRequested(Box<PermissionRequest>),
    /// After each model response: its tokens, the context window, and when the model's price is
    /// known the response's cost and the session's total (subagents' spending included).
    Usage {
        usage: Usage,
        context_window: u64,
        cost_usd: Option<f64>,
        session_cost_usd: Option<f64>,
        /// The session's tokens so far, this response's included.
        spent: Usage,
    },
    /// A compaction of the conversation started or ended; `id` is unique in the session.
    Compaction {
        id: String,
        trigger: CompactionTrigger,
        state: CompactionState,
    },
    /// Something the user should know that is not part of the answer (a retry, a fallback).
    Notice(String),
    /// The session got its title (from its first prompt).
    TitleChanged(String),
    /// The commands the user may type changed mid-session (a skill or command file added,
    /// changed or removed): the MCP servers' prompts and the skills, as the menu lists them.
    CommandsChanged {
        mcp: Vec<SlashCommand>,
        skills: Vec<SlashCommand>,
    },
    /// A subagent started (the `task` call `call`): its own session id, what it does, where it
    /// works, and its token, for a front end that lets the user stop it.
    ChildStarted {
        session: String,
        call: String,
        label: String,
        cwd: std::path::PathBuf,
        cancel: tokio_util::sync::CancellationToken,
    },
    /// One of a subagent's own events (its calls, prompts, text), for the front end to show as
    /// the child's, or labelled under the parent's call.
    Child {
        session: String,
        call: String,
        label: String,
        event: Box<AgentEvent>,
    },
    /// A subagent ended; `stop` is how, `None` when it failed with an error.
    ChildEnded {
        session: String,
        stop: Option<StopReason>,
    },
}

/// Who asked for a compaction, as PreCompact hooks are told (`manual` or `auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionTrigger {
    Manual,
    /// Near the window.
    Auto,
    /// The provider said the context overflowed: the estimate was wrong, so only what the
    /// request cannot do without is kept. Hooks are told `auto`.
    Overflow,
}

impl CompactionTrigger {
    pub fn id(self) -> &'static str {
        match self {
            Self::Manual => "manual",
            Self::Auto | Self::Overflow => "auto",
        }
    }
}

/// Why a turn ended normally. Cancellation is an outcome, not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
    /// The session's budget is spent (see the settings' `Budget`).
    BudgetExhausted,
}

impl StopReason {
    /// The name ACP gives it.
    pub fn id(self) -> &'static str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::MaxTurnRequests => "max_turn_requests",
            Self::Refusal => "refusal",
            Self::Cancelled => "cancelled",
            // ACP has no reason of its own for a spent budget; a token limit is the nearest.
            Self::BudgetExhausted => "max_tokens",
        }
    }
}

/// A command the user can type as the prompt (`/name args`): a skill, a custom command, an MCP
/// server's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    pub name: String,
    pub description: String,
    /// What it takes, for the editor's input hint.
    pub hint: Option<String>,
}

impl SlashCommand {
    /// Its description on one line, at most `chars` characters, for a menu.
    pub fn summary(&self, chars: usize) -> String {
        one_line(&self.description, chars)
    }
}

/// `text` on one line, cut at `chars` characters with an ellipsis.
pub fn one_line(text: &str, chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// What the user should hear that happened outside a turn (the settings of a new session, a
/// server that failed or dropped): said at the start of the next turn.
#[derive(Default)]
pub struct Notices {
    pending: Mutex<Vec<String>>,
}

impl Notices {
    pub fn push(&self, notice: String) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.push(notice);
        }
    }

    pub fn push_all(&self, notices: impl IntoIterator<Item = String>) {
        notices.into_iter().for_each(|notice| self.push(notice));
    }

    pub fn take(&self) -> Vec<String> {
        self.pending.lock().map(|mut pending| std::mem::take(&mut *pending)).unwrap_or_default()
    }
}

/// How a session (re)started, as SessionStart hooks are told in `source` and match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStart {
    /// A new session.
    Startup,
    /// A session loaded from its file.
    Resume,
    /// `/clear`: the conversation started over.
    Clear,
    /// A compaction replaced the conversation with its summary.
    Compact,
}

impl SessionStart {
    /// Claude Code's name for it.
    pub fn id(self) -> &'static str {
        match self {
            Self::Startup => "startup",
            Self::Resume => "resume",
            Self::Clear => "clear",
            Self::Compact => "compact",
        }
    }
}
