//! Checkpoints over ACP: `_larik/checkpoints` and `_larik/undo` for clients that show them, and
//! the words `/checkpoints` and `/undo [id]` answer with for those that do not.

use larik_core::checkpoints::{Checkpoint, Undone};
use larik_protocol::extensions::{CheckpointInfo, UndoResponse};

pub fn info(checkpoint: &Checkpoint) -> CheckpointInfo {
    CheckpointInfo {
        id: checkpoint.id.clone(),
        created_at: larik_core::clock::iso8601(checkpoint.created_at),
        prompt: checkpoint.prompt.clone(),
        files: checkpoint.files.iter().map(|path| path.display().to_string()).collect(),
        skipped: checkpoint.skipped.clone(),
    }
}

fn listed(paths: &[std::path::PathBuf]) -> Vec<String> {
    paths.iter().map(|path| path.display().to_string()).collect()
}

pub fn undo_response(undone: &Undone) -> UndoResponse {
    UndoResponse {
        checkpoint: info(&undone.checkpoint),
        restored: listed(&undone.files.restored),
        removed: listed(&undone.files.removed),
        kept: listed(&undone.files.kept),
    }
}

/// What `/undo` says it did.
pub fn said(undone: &Undone) -> String {
    let files = &undone.files;
    let mut text = format!("Undid the turn \"{}\" ({}): ", undone.checkpoint.prompt, undone.checkpoint.id);
    let mut parts = Vec::new();
    if !files.restored.is_empty() {
        parts.push(format!("restored {}", listed(&files.restored).join(", ")));
    }
    if !files.removed.is_empty() {
        parts.push(format!("removed {}", listed(&files.removed).join(", ")));
    }
    if parts.is_empty() {
        parts.push("no file needed restoring".into());
    }
    text.push_str(&parts.join("; "));
    text.push_str(". The conversation is back to before that turn.");
    if !files.kept.is_empty() {
        text.push_str(&format!(
            " Kept as they are, changed since the turn by someone else: {}.",
            listed(&files.kept).join(", ")
        ));
    }
    text
}
