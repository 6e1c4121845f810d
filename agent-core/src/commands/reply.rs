//! What a built-in command did, as data, and the plain text each reply reads as in a chat.

use std::fmt;

use crate::agents::background::{RunningTask, StopTaskError};
use crate::checkpoints::{Checkpoint, UndoError, Undone, code_span};
use crate::event::StopReason;
use crate::mcp::{McpError, McpReport};
use crate::permission::Mode;
use crate::spending::Spending;

/// A built-in command's outcome.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `/clear`: the conversation is empty and the skills were read again (the menu may change).
    Cleared,
    ModeSet(Mode),
    /// `/mode` naming a mode the organisation's policy disables.
    ModeRefused(crate::permission::ModeRefused),
    /// `/mode` with what was typed, which names no mode.
    NotAMode(String),
    /// A command this front end runs itself (`/model`, `/config`), asked of one that does not.
    Unavailable(&'static str),
    McpServers(McpReport),
    McpLoggedIn(String),
    McpReconnecting(String),
    /// `/mcp approve`: whether the user let the project's settings apply.
    ProjectSettings {
        approved: bool,
    },
    /// `/mcp` with arguments it does not take, as typed.
    McpUsage(String),
    McpFailed(McpError),
    /// `/plugin`: what it did, or why it did not.
    Plugin(crate::plugin_install::PluginOutcome),
    PluginFailed(String),
    Tasks(Vec<RunningTask>),
    TaskStopping(RunningTask),
    TaskNotStopped(StopTaskError),
    Spending(Spending),
    /// The checkpoints, oldest first.
    Checkpoints(Vec<Checkpoint>),
    Undone(Box<Undone>),
    NothingUndone(UndoError),
    /// `/compact` ran as a turn of its own; how it ended.
    Compacted(StopReason),
    Sandbox(super::SandboxReport),
}

impl fmt::Display for Reply {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Cleared => out.write_str("Started over: the conversation is empty."),
            Reply::ModeSet(mode) => write!(out, "Mode: {}.", mode.id()),
            Reply::ModeRefused(refused) => write!(out, "Not switched: {refused}."),
            Reply::NotAMode(asked) => write!(out, "`{asked}` is not a mode; use default, accept-edits, plan or yolo."),
            Reply::Unavailable(name) => write!(out, "`/{name}` is not available here; use it in an ACP editor."),
            Reply::McpServers(report) => write!(out, "{report}"),
            Reply::Plugin(outcome) => write!(out, "{outcome}"),
            Reply::PluginFailed(error) => write!(out, "{error}"),
            Reply::McpLoggedIn(server) => write!(out, "Logged in to the MCP server `{server}`; it connects now."),
            Reply::McpReconnecting(server) => write!(out, "Reconnecting the MCP server `{server}`."),
            Reply::ProjectSettings { approved: true } => {
                out.write_str("The project's settings apply: its MCP servers connect now.")
            }
            Reply::ProjectSettings { approved: false } => {
                out.write_str("The project's settings stay off: its MCP servers do not run.")
            }
            Reply::McpUsage(asked) => write!(
                out,
                "`/mcp {asked}`: use `/mcp`, `/mcp login <server>`, `/mcp reconnect <server>` or `/mcp approve`."
            ),
            Reply::McpFailed(error) => write!(out, "{error}"),
            Reply::Tasks(running) => tasks(out, running),
            Reply::TaskStopping(task) => write!(out, "Stopping the background task `{}` ({}).", task.id, task.label),
            Reply::TaskNotStopped(error) => write!(out, "{error}"),
            Reply::Spending(spending) => write!(out, "{spending}"),
            Reply::Checkpoints(list) => checkpoints(out, list),
            Reply::Undone(undone) => self::undone(out, undone),
            Reply::NothingUndone(error) => write!(out, "Nothing was undone: {error}."),
            Reply::Compacted(_) => out.write_str("The conversation was compacted; it goes on from a summary."),
            Reply::Sandbox(report) => write!(out, "{report}"),
        }
    }
}

fn tasks(out: &mut fmt::Formatter<'_>, running: &[RunningTask]) -> fmt::Result {
    if running.is_empty() {
        return out.write_str("No background tasks are running.");
    }
    out.write_str("Background tasks:\n")?;
    for task in running {
        writeln!(out, "- {}: {} (running)", task.id, task.label)?;
    }
    out.write_str("\n`/tasks stop ID` stops one.")
}

/// Newest first, with the files each changed (eight at most, then how many more).
fn checkpoints(out: &mut fmt::Formatter<'_>, list: &[Checkpoint]) -> fmt::Result {
    if list.is_empty() {
        return out.write_str("No checkpoints: no turn of this session has changed a file yet.");
    }
    out.write_str("Checkpoints (undo with /undo, or /undo <id>):")?;
    for checkpoint in list.iter().rev() {
        let files: Vec<String> =
            checkpoint.files.iter().take(8).map(|path| code_span(&path.display().to_string())).collect();
        let more = checkpoint.files.len().saturating_sub(files.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        write!(
            out,
            "\n- {} {} \"{}\": {}{more}",
            checkpoint.id,
            crate::clock::iso8601(checkpoint.created_at),
            checkpoint.prompt,
            files.join(", ")
        )?;
    }
    if let Some(skipped) = list.last().map(|last| &last.skipped).filter(|skipped| !skipped.is_empty()) {
        let skipped: Vec<String> = skipped.iter().map(|path| code_span(path)).collect();
        write!(out, "\nNot covered (large ignored trees and files): {}", skipped.join(", "))?;
    }
    Ok(())
}

/// Paths as code: a reply is Markdown, where `__pycache__` would read as a bold "pycache".
fn listed(paths: &[std::path::PathBuf]) -> String {
    paths.iter().map(|path| code_span(&path.display().to_string())).collect::<Vec<_>>().join(", ")
}

fn undone(out: &mut fmt::Formatter<'_>, undone: &Undone) -> fmt::Result {
    let files = &undone.files;
    write!(out, "Undid the turn \"{}\" ({}): ", undone.checkpoint.prompt, undone.checkpoint.id)?;
    let mut parts = Vec::new();
    if !files.restored.is_empty() {
        parts.push(format!("restored {}", listed(&files.restored)));
    }
    if !files.removed.is_empty() {
        parts.push(format!("removed {}", listed(&files.removed)));
    }
    if parts.is_empty() {
        parts.push("no file needed restoring".into());
    }
    write!(out, "{}. The conversation is back to before that turn.", parts.join("; "))?;
    if !files.kept.is_empty() {
        write!(out, " Kept as they are, changed since the turn by someone else: {}.", listed(&files.kept))?;
    }
    Ok(())
}
