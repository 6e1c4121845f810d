//! Checkpoints over ACP: `_larik/checkpoints` and `_larik/undo` for clients that show them, and
//! for the others, `/checkpoints` and `/undo [id]` answer in words (the core's reply).

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
